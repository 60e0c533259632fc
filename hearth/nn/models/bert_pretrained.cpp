// from_pretrained and save_pretrained of the BERT models: reading and writing
// Hugging Face model folders.
#include <algorithm>
#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>

#include <nlohmann/json.hpp>

#include "hearth/core/errors.h"
#include "hearth/io/file_checks.h"
#include "hearth/io/json_limits.h"
#include "hearth/io/safetensors.h"
#include "hearth/nn/init.h"
#include "hearth/nn/models/bert.h"

namespace hearth::nn::models {
namespace {

namespace fs = std::filesystem;

constexpr const char* kWeightsFile = "model.safetensors";
constexpr const char* kShardIndexFile = "model.safetensors.index.json";
constexpr const char* kConfigFile = "config.json";

bool starts_with(const std::string& s, const std::string& prefix) { return s.rfind(prefix, 0) == 0; }
bool ends_with(const std::string& s, const std::string& suffix) {
  return s.size() >= suffix.size() && s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

std::string join(const std::vector<std::string>& names, size_t limit = 12) {
  std::string out;
  for (size_t i = 0; i < names.size() && i < limit; ++i) out += (i ? ", " : "") + names[i];
  if (names.size() > limit) out += ", ... (" + std::to_string(names.size()) + " in all)";
  return out;
}

std::string listing(const fs::path& dir) {
  std::vector<std::string> names;
  for (const auto& entry : fs::directory_iterator(dir)) names.push_back(entry.path().filename().string());
  std::sort(names.begin(), names.end());
  return names.empty() ? std::string("nothing") : join(names, 20);
}

// The folder must exist locally: hearth has no network access, so a hub name
// ("bert-base-uncased") gets instructions for fetching it elsewhere.
fs::path model_folder(const std::string& model_dir) {
  const fs::path dir(model_dir);
  if (!fs::exists(dir)) {
    // "org/name/" -> the repository "org/name", downloaded into the folder "name".
    fs::path local = dir.lexically_normal();
    if (local.filename().empty()) local = local.parent_path();
    HEARTH_THROW(IoError, "[bert] \"", model_dir,
                 "\" is not a folder. hearth loads models only from a local folder and never downloads them (it has "
                 "no network access). On a machine with internet access, download the model, e.g.\n"
                 "  huggingface-cli download ",
                 local.string(), " --local-dir ", local.filename().string(),
                 "\n(or in Python: transformers.AutoModel.from_pretrained(\"", model_dir,
                 "\").save_pretrained(\"<folder>\")), copy the folder to this machine and pass its path.");
  }
  HEARTH_CHECK(fs::is_directory(dir), IoError, "[bert] \"", model_dir,
               "\" is a file; pass the model folder that holds config.json and model.safetensors");
  HEARTH_CHECK(fs::exists(dir / kConfigFile), IoError, "[bert] ", (dir / kConfigFile).string(),
               " is missing: a model folder holds config.json and model.safetensors; this one holds ", listing(dir));
  return dir;
}

BertConfig read_config(const fs::path& dir, const BertLoadOptions& options) {
  BertConfig config = BertConfig::from_json_file((dir / kConfigFile).string());
  if (options.num_labels) config.set_num_labels(*options.num_labels);
  if (options.problem_type) config.problem_type = *options.problem_type;
  config.validate((dir / kConfigFile).string());
  return config;
}

// Every tensor of the checkpoint, as views of the mapped files (no copy), with
// the file each came from.
struct Checkpoint {
  StateDict tensors;
  std::map<std::string, std::string> file_of;
  std::string description;  // for messages: the file, or the index
};

void add_file(Checkpoint& ckpt, const fs::path& path) {
  io::SafetensorsFile file(path.string());
  for (const std::string& name : file.names()) {
    ckpt.tensors[name] = file.view(name);
    ckpt.file_of[name] = path.string();
  }
}

Checkpoint read_checkpoint(const fs::path& dir) {
  Checkpoint ckpt;
  if (fs::exists(dir / kWeightsFile)) {
    ckpt.description = (dir / kWeightsFile).string();
    add_file(ckpt, dir / kWeightsFile);
    return ckpt;
  }
  if (fs::exists(dir / kShardIndexFile)) {
    const std::string index_path = (dir / kShardIndexFile).string();
    ckpt.description = index_path;
    nlohmann::json index;
    try {
      io::check_regular_file(index_path, "[bert]");
      std::ifstream in(index_path);
      index = nlohmann::json::parse(io::read_json_text(in, "[bert] " + index_path));
    } catch (const nlohmann::json::exception& e) {
      HEARTH_THROW(IoError, "[bert] ", index_path, ": not valid JSON: ", e.what());
    }
    HEARTH_CHECK(index.is_object() && index.contains("weight_map") && index["weight_map"].is_object(), IoError,
                 "[bert] ", index_path, ": field \"weight_map\": expected an object of tensor name to shard file");
    std::set<std::string> shards;
    for (const auto& [name, shard] : index["weight_map"].items()) {
      HEARTH_CHECK(shard.is_string(), IoError, "[bert] ", index_path, ": field \"weight_map\": the shard of ", name,
                   " is not a file name: ", shard.dump());
      // A shard is a file of this folder: an index never reaches outside it.
      const fs::path shard_path(shard.get<std::string>());
      const bool escapes =
          shard_path.empty() || shard_path.is_absolute() || shard_path.has_root_name() ||
          std::any_of(shard_path.begin(), shard_path.end(), [](const fs::path& c) { return c == ".."; });
      HEARTH_CHECK(!escapes, IoError, "[bert] ", index_path, ": field \"weight_map\": the shard of ", name, " is ",
                   shard.dump(), ", which is not a file inside the model folder");
      shards.insert(shard.get<std::string>());
    }
    for (const std::string& shard : shards) {
      // Nor through a symlinked sub-folder. The shard file itself may be a
      // link (a Hub cache's snapshot folder links each file to its blob).
      fs::path prefix = dir;
      const fs::path shard_path(shard);
      for (auto it = shard_path.begin(); std::next(it) != shard_path.end(); ++it) {
        prefix /= *it;
        std::error_code ec;
        HEARTH_CHECK(!fs::is_symlink(prefix, ec), IoError, "[bert] ", index_path, " lists the shard ", shard,
                     ", reached through the symlink ", prefix.string(),
                     "; shards are read only from inside the model folder");
      }
      HEARTH_CHECK(fs::exists(dir / shard), IoError, "[bert] ", index_path, " lists the shard ", shard,
                   ", which is not in the folder");
      add_file(ckpt, dir / shard);
    }
    return ckpt;
  }
  const bool has_torch_bin = fs::exists(dir / "pytorch_model.bin");
  HEARTH_THROW(IoError, "[bert] ", (dir / kWeightsFile).string(), " is missing",
               has_torch_bin ? std::string(": the folder has only pytorch_model.bin, a pickle hearth does not read. "
                                           "Convert it on a machine with PyTorch: "
                                           "transformers.AutoModel.from_pretrained(\"<folder>\")"
                                           ".save_pretrained(\"<folder>\", safe_serialization=True)")
                             : std::string("; the folder holds ") + listing(dir));
}

// Old checkpoints (the original BERT release) name LayerNorm's parameters
// gamma and beta; Hugging Face renames them on load, and so does hearth.
std::string modern_name(const std::string& key) {
  if (ends_with(key, ".gamma")) return key.substr(0, key.size() - 6) + ".weight";
  if (ends_with(key, ".beta")) return key.substr(0, key.size() - 5) + ".bias";
  return key;
}

// Checkpoint entries that are not weights of the model being loaded but are
// expected in BERT folders: pre-training heads, buffers older versions saved.
bool is_foreign_head(const std::string& key, bool model_has_classifier) {
  if (starts_with(key, "cls.")) return true;  // masked-LM and next-sentence heads
  if (!model_has_classifier && starts_with(key, "classifier.")) return true;
  return false;
}
bool is_saved_buffer(const std::string& key) {
  return ends_with(key, "embeddings.position_ids") || ends_with(key, "embeddings.token_type_ids");
}

// Copies the checkpoint into `model`. `base_prefix` is where the BertModel sits
// in `model` ("bert." or ""); names are mapped between a base checkpoint and a
// task checkpoint in both directions. Keys in `may_be_missing` may be absent:
// they are returned, for the caller to initialise, and named in a warning.
std::vector<std::string> load_checkpoint(Module& model, const std::string& model_name, const fs::path& dir,
                                         const std::string& base_prefix, const std::set<std::string>& may_be_missing,
                                         std::ostream* log) {
  Checkpoint ckpt = read_checkpoint(dir);
  bool has_prefixed = false;
  for (const auto& [key, _] : ckpt.tensors) has_prefixed = has_prefixed || starts_with(key, "bert.");

  const StateDict expected = model.state_dict();
  StateDict matched;
  std::vector<std::string> heads_ignored, unexpected, misshapen;
  for (const auto& [file_key, tensor] : ckpt.tensors) {
    std::string key = modern_name(file_key);
    if (base_prefix.empty() && starts_with(key, "bert.")) {
      key = key.substr(5);  // a task checkpoint loaded into the base model
    } else if (!base_prefix.empty() && !has_prefixed &&
               (starts_with(key, "embeddings.") || starts_with(key, "encoder.") || starts_with(key, "pooler."))) {
      key = base_prefix + key;  // a base checkpoint loaded under a task model
    }
    auto it = expected.find(key);
    if (it == expected.end()) {
      if (is_saved_buffer(key)) continue;
      (is_foreign_head(key, !base_prefix.empty()) ? heads_ignored : unexpected).push_back(file_key);
      continue;
    }
    if (tensor.shape() != it->second.shape()) {
      misshapen.push_back(file_key + " is " + tensor.shape_string() + ", the model's " + key + " is " +
                          it->second.shape_string());
      continue;
    }
    matched[key] = tensor;
  }
  HEARTH_CHECK(misshapen.empty(), ShapeError, "[bert] ", ckpt.description, " does not fit ", model_name, " built from ",
               (dir / kConfigFile).string(), ": ", join(misshapen, 6),
               ". A classifier of another label count needs options.num_labels to match the checkpoint.");
  HEARTH_CHECK(unexpected.empty(), ValueError, "[bert] ", ckpt.description, " holds weights ", model_name,
               " does not have: ", join(unexpected), ". Is it a BERT checkpoint of this architecture?");

  std::vector<std::string> missing, initialised_fresh;
  for (const auto& [key, _] : expected)
    if (!matched.count(key)) (may_be_missing.count(key) ? initialised_fresh : missing).push_back(key);
  HEARTH_CHECK(missing.empty(), ValueError, "[bert] ", ckpt.description, " lacks weights of ", model_name, ": ",
               join(missing), ". The checkpoint does not match ", (dir / kConfigFile).string(), ".");

  try {
    model.load_state_dict(matched, /*strict=*/false);
  } catch (const IoError&) {
    throw;
  } catch (const Error& e) {
    HEARTH_THROW(ValueError, "[bert] ", ckpt.description, ": ", e.what());
  }
  if (log && !heads_ignored.empty())
    *log << "[bert] " << ckpt.description << ": ignored " << heads_ignored.size() << " weights of heads " << model_name
         << " does not have (" << join(heads_ignored, 4) << ")\n";
  if (log && !initialised_fresh.empty())
    *log << "[bert] " << model_name << ": " << join(initialised_fresh) << " not in " << ckpt.description
         << ", newly initialised. Train the model on a downstream task before using it for predictions.\n";
  return initialised_fresh;
}

void save_folder(const Module& model, const BertConfig& config, const char* architecture, const std::string& dir) {
  fs::create_directories(dir);
  const fs::path folder(dir);
  io::save_safetensors((folder / kWeightsFile).string(), model.state_dict(), {{"format", "pt"}});
  config.save((folder / kConfigFile).string(), {architecture});
}

}  // namespace

std::shared_ptr<BertModel> BertModel::from_pretrained(const std::string& model_dir, const BertLoadOptions& options) {
  const fs::path dir = model_folder(model_dir);
  const BertConfig config = read_config(dir, options);
  std::shared_ptr<BertModel> model;
  {
    nn::init::SkipInitGuard every_weight_comes_from_the_checkpoint;
    model = std::make_shared<BertModel>(config);
  }
  load_checkpoint(*model, "BertModel", dir, "", {}, options.log);
  return model;
}

void BertModel::save_pretrained(const std::string& dir) const { save_folder(*this, config, "BertModel", dir); }

std::shared_ptr<BertForSequenceClassification> BertForSequenceClassification::from_pretrained(
    const std::string& model_dir, const BertLoadOptions& options) {
  const fs::path dir = model_folder(model_dir);
  const BertConfig config = read_config(dir, options);
  std::shared_ptr<BertForSequenceClassification> model;
  {
    nn::init::SkipInitGuard weights_come_from_the_checkpoint;  // or are initialised below
    model = std::make_shared<BertForSequenceClassification>(config);
  }
  const std::vector<std::string> fresh = load_checkpoint(*model, "BertForSequenceClassification", dir, "bert.",
                                                         {"classifier.weight", "classifier.bias"}, options.log);
  // A base checkpoint has no classifier: Hugging Face's initialisation, from the global generator.
  if (!fresh.empty()) init_bert_weights(*model->classifier, config.initializer_range);
  return model;
}

void BertForSequenceClassification::save_pretrained(const std::string& dir) const {
  save_folder(*this, config, "BertForSequenceClassification", dir);
}

}  // namespace hearth::nn::models
