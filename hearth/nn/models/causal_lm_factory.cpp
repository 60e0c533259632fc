// The registry of causal language models: config.json's model_type picks
// the class that builds or loads the model.
#include <filesystem>

#include "hearth/core/errors.h"
#include "hearth/nn/models/causal_lm.h"
#include "hearth/nn/models/gpt2.h"
#include "hearth/nn/models/hf_checkpoint.h"
#include "hearth/nn/models/hf_config_reader.h"
#include "hearth/nn/models/llama.h"

namespace hearth::nn::models {
namespace {

namespace fs = std::filesystem;
constexpr const char* kTag = "[causal_lm]";

std::string supported_list() {
  const auto& names = causal_lm_model_types();
  std::string s;
  for (size_t i = 0; i < names.size(); ++i)
    s += (i ? (i + 1 == names.size() ? " or " : ", ") : "") + ("\"" + names[i] + "\"");
  return s;
}

// config.json's model_type, checked to be one hearth builds.
std::string model_type_of(const std::string& config_path) {
  const nlohmann::json j = read_hf_config_file(config_path, kTag);
  if (!j.contains("model_type") || !j["model_type"].is_string())
    hf_config_error(kTag, config_path, "model_type",
                    "expected a string naming the architecture (" + supported_list() + "), got " +
                        (j.contains("model_type") ? j["model_type"].dump() : std::string("none")));
  const std::string type = j["model_type"].get<std::string>();
  for (const auto& known : causal_lm_model_types())
    if (type == known) return type;
  hf_config_error(kTag, config_path, "model_type",
                  "\"" + type + "\" is not a causal language model hearth builds; expected " + supported_list());
}

}  // namespace

const std::vector<std::string>& causal_lm_model_types() {
  static const std::vector<std::string> names = {"gpt2", "llama", "mistral", "qwen2"};
  return names;
}

std::shared_ptr<CausalLM> load_causal_lm(const std::string& model_dir) {
  const fs::path dir = hf_model_folder(model_dir, kTag);
  const std::string type = model_type_of((dir / kHfConfigFile).string());
  if (type == "gpt2") return GPT2LMHeadModel::from_pretrained(model_dir);
  return LlamaForCausalLM::from_pretrained(model_dir);
}

std::shared_ptr<CausalLM> causal_lm_from_config(const std::string& config_path_or_dir) {
  std::string path = config_path_or_dir;
  if (fs::is_directory(path)) path = (fs::path(path) / kHfConfigFile).string();
  HEARTH_CHECK(fs::exists(path), IoError, kTag, " ", path, " does not exist; pass a config.json or a model folder");
  const std::string type = model_type_of(path);
  if (type == "gpt2") return std::make_shared<GPT2LMHeadModel>(GPT2Config::from_json_file(path));
  return std::make_shared<LlamaForCausalLM>(LlamaConfig::from_json_file(path));
}

}  // namespace hearth::nn::models
