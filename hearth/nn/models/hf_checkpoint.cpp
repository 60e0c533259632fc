#include "hearth/nn/models/hf_checkpoint.h"

#include <algorithm>
#include <fstream>
#include <set>

#include <nlohmann/json.hpp>

#include "hearth/core/errors.h"
#include "hearth/io/file_checks.h"
#include "hearth/io/json_limits.h"
#include "hearth/io/safetensors.h"

namespace hearth::nn::models {
namespace {

namespace fs = std::filesystem;

std::string listing(const fs::path& dir) {
  std::vector<std::string> names;
  for (const auto& entry : fs::directory_iterator(dir)) names.push_back(entry.path().filename().string());
  std::sort(names.begin(), names.end());
  return names.empty() ? std::string("nothing") : join_names(names, 20);
}

void add_file(HfCheckpoint& ckpt, const fs::path& path) {
  io::SafetensorsFile file(path.string());
  for (const std::string& name : file.names()) {
    ckpt.tensors[name] = file.view(name);
    ckpt.file_of[name] = path.string();
  }
}

// The shard file names of an index, each checked to stay inside the folder.
std::set<std::string> shard_names(const fs::path& dir, const std::string& index_path, const std::string& tag) {
  nlohmann::json index;
  try {
    io::check_regular_file(index_path, tag);
    std::ifstream in(index_path);
    index = nlohmann::json::parse(io::read_json_text(in, tag + " " + index_path));
  } catch (const nlohmann::json::exception& e) {
    HEARTH_THROW(IoError, tag, " ", index_path, ": not valid JSON: ", e.what());
  }
  HEARTH_CHECK(index.is_object() && index.contains("weight_map") && index["weight_map"].is_object(), IoError, tag, " ",
               index_path, ": field \"weight_map\": expected an object of tensor name to shard file");
  std::set<std::string> shards;
  for (const auto& [name, shard] : index["weight_map"].items()) {
    HEARTH_CHECK(shard.is_string(), IoError, tag, " ", index_path, ": field \"weight_map\": the shard of ", name,
                 " is not a file name: ", shard.dump());
    // A shard is a file of this folder: an index never reaches outside it.
    const fs::path shard_path(shard.get<std::string>());
    const bool escapes = shard_path.empty() || shard_path.is_absolute() || shard_path.has_root_name() ||
                         std::any_of(shard_path.begin(), shard_path.end(), [](const fs::path& c) { return c == ".."; });
    HEARTH_CHECK(!escapes, IoError, tag, " ", index_path, ": field \"weight_map\": the shard of ", name, " is ",
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
      HEARTH_CHECK(!fs::is_symlink(prefix, ec), IoError, tag, " ", index_path, " lists the shard ", shard,
                   ", reached through the symlink ", prefix.string(),
                   "; shards are read only from inside the model folder");
    }
    HEARTH_CHECK(fs::exists(dir / shard), IoError, tag, " ", index_path, " lists the shard ", shard,
                 ", which is not in the folder");
  }
  return shards;
}

}  // namespace

std::string join_names(const std::vector<std::string>& names, size_t limit) {
  std::string out;
  for (size_t i = 0; i < names.size() && i < limit; ++i) out += (i ? ", " : "") + names[i];
  if (names.size() > limit) out += ", ... (" + std::to_string(names.size()) + " in all)";
  return out;
}

fs::path hf_model_folder(const std::string& model_dir, const std::string& tag) {
  const fs::path dir(model_dir);
  if (!fs::exists(dir)) {
    // "org/name/" -> the repository "org/name", downloaded into the folder "name".
    fs::path local = dir.lexically_normal();
    if (local.filename().empty()) local = local.parent_path();
    HEARTH_THROW(IoError, tag, " \"", model_dir,
                 "\" is not a folder. hearth loads models only from a local folder and never downloads them (it has "
                 "no network access). On a machine with internet access, download the model, e.g.\n"
                 "  huggingface-cli download ",
                 local.string(), " --local-dir ", local.filename().string(),
                 "\n(or in Python: transformers.AutoModel.from_pretrained(\"", model_dir,
                 "\").save_pretrained(\"<folder>\")), copy the folder to this machine and pass its path.");
  }
  HEARTH_CHECK(fs::is_directory(dir), IoError, tag, " \"", model_dir,
               "\" is a file; pass the model folder that holds config.json and model.safetensors");
  HEARTH_CHECK(fs::exists(dir / kHfConfigFile), IoError, tag, " ", (dir / kHfConfigFile).string(),
               " is missing: a model folder holds config.json and model.safetensors; this one holds ", listing(dir));
  return dir;
}

HfCheckpoint read_hf_checkpoint(const fs::path& dir, const std::string& tag) {
  HfCheckpoint ckpt;
  if (fs::exists(dir / kHfWeightsFile)) {
    ckpt.description = (dir / kHfWeightsFile).string();
    add_file(ckpt, dir / kHfWeightsFile);
    return ckpt;
  }
  if (fs::exists(dir / kHfShardIndexFile)) {
    const std::string index_path = (dir / kHfShardIndexFile).string();
    ckpt.description = index_path;
    for (const std::string& shard : shard_names(dir, index_path, tag)) add_file(ckpt, dir / shard);
    return ckpt;
  }
  const bool has_torch_bin = fs::exists(dir / "pytorch_model.bin");
  HEARTH_THROW(IoError, tag, " ", (dir / kHfWeightsFile).string(), " is missing",
               has_torch_bin ? std::string(": the folder has only pytorch_model.bin, a pickle hearth does not read. "
                                           "Convert it on a machine with PyTorch: "
                                           "transformers.AutoModel.from_pretrained(\"<folder>\")"
                                           ".save_pretrained(\"<folder>\", safe_serialization=True)")
                             : std::string("; the folder holds ") + listing(dir));
}

void load_hf_checkpoint_into(Module& model, const HfCheckpoint& ckpt,
                             const std::function<std::optional<std::string>(const std::string&)>& model_key,
                             const std::string& tag, const std::string& model_name, const std::string& config_path) {
  const StateDict expected = model.state_dict();
  StateDict matched;
  std::map<std::string, std::string> source_of;  // model key -> file key
  std::vector<std::string> unexpected, misshapen, duplicated;
  for (const auto& [file_key, tensor] : ckpt.tensors) {
    const std::optional<std::string> key = model_key(file_key);
    if (!key) continue;
    auto it = expected.find(*key);
    if (it == expected.end()) {
      unexpected.push_back(file_key);
      continue;
    }
    if (source_of.count(*key)) {
      duplicated.push_back(source_of[*key] + " and " + file_key);
      continue;
    }
    source_of[*key] = file_key;
    if (tensor.shape() != it->second.shape()) {
      misshapen.push_back(file_key + " is " + tensor.shape_string() + ", the model's " + *key + " is " +
                          it->second.shape_string());
      continue;
    }
    matched[*key] = tensor;
  }
  HEARTH_CHECK(misshapen.empty(), ShapeError, tag, " ", ckpt.description, " does not fit ", model_name, " built from ",
               config_path, ": ", join_names(misshapen, 6));
  HEARTH_CHECK(duplicated.empty(), ValueError, tag, " ", ckpt.description,
               " holds the same weight twice: ", join_names(duplicated, 6));
  HEARTH_CHECK(unexpected.empty(), ValueError, tag, " ", ckpt.description, " holds weights ", model_name,
               " does not have: ", join_names(unexpected), ". Does ", config_path, " describe this checkpoint?");
  std::vector<std::string> missing;
  for (const auto& [key, _] : expected)
    if (!matched.count(key)) missing.push_back(key);
  HEARTH_CHECK(missing.empty(), ValueError, tag, " ", ckpt.description, " lacks weights of ", model_name, ": ",
               join_names(missing), ". The checkpoint does not match ", config_path, ".");
  try {
    model.load_state_dict(matched, /*strict=*/true);
  } catch (const IoError&) {
    throw;
  } catch (const Error& e) {
    HEARTH_THROW(ValueError, tag, " ", ckpt.description, ": ", e.what());
  }
}

void save_hf_weights(const std::string& dir, const StateDict& tensors) {
  fs::create_directories(dir);
  io::save_safetensors((fs::path(dir) / kHfWeightsFile).string(), tensors, {{"format", "pt"}});
}

}  // namespace hearth::nn::models
