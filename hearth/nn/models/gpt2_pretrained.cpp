// from_pretrained and save_pretrained of GPT2LMHeadModel: Hugging Face model
// folders in both directions.
#include "hearth/core/errors.h"
#include "hearth/nn/init.h"
#include "hearth/nn/models/gpt2.h"
#include "hearth/nn/models/hf_checkpoint.h"

namespace hearth::nn::models {
namespace {

constexpr const char* kTag = "[gpt2]";

bool starts_with(const std::string& s, const std::string& prefix) { return s.rfind(prefix, 0) == 0; }
bool ends_with(const std::string& s, const std::string& suffix) {
  return s.size() >= suffix.size() && s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

}  // namespace

std::shared_ptr<GPT2LMHeadModel> GPT2LMHeadModel::from_pretrained(const std::string& model_dir) {
  const auto dir = hf_model_folder(model_dir, kTag);
  const std::string config_path = (dir / kHfConfigFile).string();
  const GPT2Config config = GPT2Config::from_json_file(config_path);
  std::shared_ptr<GPT2LMHeadModel> model;
  {
    nn::init::SkipInitGuard every_weight_comes_from_the_checkpoint;
    model = std::make_shared<GPT2LMHeadModel>(config);
  }
  const HfCheckpoint ckpt = read_hf_checkpoint(dir, kTag);
  const bool tied = config.tie_word_embeddings;
  // A GPT2LMHeadModel's file names its weights "transformer.*"; a GPT2Model's
  // (the original "gpt2" release) names them without the prefix.
  auto model_key = [tied](const std::string& key) -> std::optional<std::string> {
    // The causal masks older versions saved as buffers, not weights.
    if (ends_with(key, ".attn.bias") || ends_with(key, ".attn.masked_bias")) return std::nullopt;
    if (key == "lm_head.weight") return tied ? std::nullopt : std::optional<std::string>(key);  // tied: wte's copy
    return starts_with(key, "transformer.") ? key : "transformer." + key;
  };
  load_hf_checkpoint_into(*model, ckpt, model_key, kTag, "GPT2LMHeadModel", config_path);
  return model;
}

void GPT2LMHeadModel::save_pretrained(const std::string& dir) const {
  // state_dict() holds no lm_head.weight when it is tied: transformers saves
  // the tied weight once, under transformer.wte.weight, and ties on load.
  save_hf_weights(dir, state_dict());
  const Tensor any = transformer->wte->weight;
  config.save((std::filesystem::path(dir) / kHfConfigFile).string(), {"GPT2LMHeadModel"}, dtype_name(any.dtype()));
}

}  // namespace hearth::nn::models
