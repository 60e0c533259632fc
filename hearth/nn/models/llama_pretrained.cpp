// from_pretrained and save_pretrained of LlamaForCausalLM (and Mistral's and
// Qwen2's): Hugging Face model folders in both directions.
#include "hearth/core/errors.h"
#include "hearth/nn/init.h"
#include "hearth/nn/models/hf_checkpoint.h"
#include "hearth/nn/models/llama.h"

namespace hearth::nn::models {
namespace {

constexpr const char* kTag = "[llama]";

bool starts_with(const std::string& s, const std::string& prefix) { return s.rfind(prefix, 0) == 0; }
bool ends_with(const std::string& s, const std::string& suffix) {
  return s.size() >= suffix.size() && s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

}  // namespace

std::shared_ptr<LlamaForCausalLM> LlamaForCausalLM::from_pretrained(const std::string& model_dir) {
  const auto dir = hf_model_folder(model_dir, kTag);
  const std::string config_path = (dir / kHfConfigFile).string();
  const LlamaConfig config = LlamaConfig::from_json_file(config_path);
  std::shared_ptr<LlamaForCausalLM> model;
  {
    nn::init::SkipInitGuard every_weight_comes_from_the_checkpoint;
    model = std::make_shared<LlamaForCausalLM>(config);
  }
  const HfCheckpoint ckpt = read_hf_checkpoint(dir, kTag);
  const bool tied = config.tie_word_embeddings;
  // A *ForCausalLM's file names the stack's weights "model.*"; a bare
  // LlamaModel's names them without the prefix.
  auto model_key = [tied](const std::string& key) -> std::optional<std::string> {
    // Older versions saved the rotary frequencies as a buffer; they follow from the config.
    if (ends_with(key, ".rotary_emb.inv_freq")) return std::nullopt;
    if (key == "lm_head.weight") return tied ? std::nullopt : std::optional<std::string>(key);  // tied: a copy
    return starts_with(key, "model.") ? key : "model." + key;
  };
  load_hf_checkpoint_into(*model, ckpt, model_key, kTag, model->type_name(), config_path);
  return model;
}

void LlamaForCausalLM::save_pretrained(const std::string& dir) const {
  // state_dict() holds no lm_head.weight when it is tied: transformers saves
  // the tied weight once, under model.embed_tokens.weight, and ties on load.
  save_hf_weights(dir, state_dict());
  config.save((std::filesystem::path(dir) / kHfConfigFile).string(), {config.architecture()},
              dtype_name(model->embed_tokens->weight.dtype()));
}

}  // namespace hearth::nn::models
