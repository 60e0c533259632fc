// from_pretrained and save_pretrained of the BERT models: reading and writing
// Hugging Face model folders (the folder and file handling is hf_checkpoint's,
// shared with the causal language models).
#include <filesystem>
#include <set>

#include "hearth/core/errors.h"
#include "hearth/nn/init.h"
#include "hearth/nn/models/bert.h"
#include "hearth/nn/models/hf_checkpoint.h"

namespace hearth::nn::models {
namespace {

namespace fs = std::filesystem;

bool starts_with(const std::string& s, const std::string& prefix) { return s.rfind(prefix, 0) == 0; }
bool ends_with(const std::string& s, const std::string& suffix) {
  return s.size() >= suffix.size() && s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

std::string join(const std::vector<std::string>& names, size_t limit = 12) { return join_names(names, limit); }

fs::path model_folder(const std::string& model_dir) { return hf_model_folder(model_dir, "[bert]"); }

BertConfig read_config(const fs::path& dir, const BertLoadOptions& options) {
  BertConfig config = BertConfig::from_json_file((dir / kHfConfigFile).string());
  if (options.num_labels) config.set_num_labels(*options.num_labels);
  if (options.problem_type) config.problem_type = *options.problem_type;
  config.validate((dir / kHfConfigFile).string());
  return config;
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
  HfCheckpoint ckpt = read_hf_checkpoint(dir, "[bert]");
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
               (dir / kHfConfigFile).string(), ": ", join(misshapen, 6),
               ". A classifier of another label count needs options.num_labels to match the checkpoint.");
  HEARTH_CHECK(unexpected.empty(), ValueError, "[bert] ", ckpt.description, " holds weights ", model_name,
               " does not have: ", join(unexpected), ". Is it a BERT checkpoint of this architecture?");

  std::vector<std::string> missing, initialised_fresh;
  for (const auto& [key, _] : expected)
    if (!matched.count(key)) (may_be_missing.count(key) ? initialised_fresh : missing).push_back(key);
  HEARTH_CHECK(missing.empty(), ValueError, "[bert] ", ckpt.description, " lacks weights of ", model_name, ": ",
               join(missing), ". The checkpoint does not match ", (dir / kHfConfigFile).string(), ".");

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
  save_hf_weights(dir, model.state_dict());
  config.save((fs::path(dir) / kHfConfigFile).string(), {architecture});
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
