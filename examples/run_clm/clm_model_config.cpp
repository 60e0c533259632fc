#include "examples/run_clm/clm_model_config.h"

#include <charconv>
#include <sstream>

#include <nlohmann/json.hpp>

#include "hearth/core/errors.h"
#include "hearth/nn/models/gpt2.h"
#include "hearth/nn/models/llama.h"

namespace run_clm {
namespace {

using json = nlohmann::json;

std::string defaults_of(const std::string& model_type) {
  if (model_type == "gpt2") return hearth::nn::models::GPT2Config().to_json_string();
  if (model_type == "llama" || model_type == "mistral" || model_type == "qwen2")
    return hearth::nn::models::LlamaConfig::defaults_for(model_type).to_json_string();
  HEARTH_THROW(hearth::ValueError, "--model_type ", model_type,
               ": expected one of gpt2, llama, mistral, qwen2 (the causal language models hearth builds)");
}

// The override's text as the type of the field's default value.
json typed_value(const std::string& key, const std::string& text, const json& old) {
  auto bad = [&](const char* expected) {
    HEARTH_THROW(hearth::ValueError, "--config_overrides: ", key, "=", text, ": expected ", expected,
                 " (the type of the default, ", old.dump(), ")");
  };
  if (old.is_boolean()) {
    if (text == "true" || text == "True" || text == "1") return true;
    if (text == "false" || text == "False" || text == "0") return false;
    bad("true or false");
  }
  if (old.is_number_integer()) {
    int64_t v = 0;
    auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
    if (ec != std::errc() || end != text.data() + text.size()) bad("an integer");
    return v;
  }
  if (old.is_number_float()) {
    try {
      size_t used = 0;
      const double v = std::stod(text, &used);
      if (used == text.size()) return v;
    } catch (const std::exception&) {
    }
    bad("a number");
  }
  if (old.is_string()) return text;
  HEARTH_THROW(hearth::ValueError, "--config_overrides: ", key,
               ": only integer, number, boolean and string fields can be set this way; its default is ", old.dump());
}

}  // namespace

std::string config_of_model_type(const std::string& model_type, const std::string& overrides) {
  json config = json::parse(defaults_of(model_type));
  std::stringstream in(overrides);
  std::string item;
  while (std::getline(in, item, ',')) {
    if (item.empty()) continue;
    const size_t eq = item.find('=');
    HEARTH_CHECK(eq != std::string::npos && eq > 0, hearth::ValueError, "--config_overrides: '", item,
                 "': expected key=value pairs separated by commas, e.g. n_embd=10,resid_pdrop=0.2");
    const std::string key = item.substr(0, eq), value = item.substr(eq + 1);
    HEARTH_CHECK(config.contains(key), hearth::ValueError, "--config_overrides: key ", key, " is not a field of the ",
                 model_type, " config");
    config[key] = typed_value(key, value, config[key]);
  }
  return config.dump(2);
}

std::shared_ptr<hearth::nn::models::CausalLM> model_of_type(const std::string& model_type,
                                                            const std::string& overrides) {
  const std::string text = config_of_model_type(model_type, overrides);
  const std::string where = "--model_type " + model_type + " --config_overrides";
  if (model_type == "gpt2")
    return std::make_shared<hearth::nn::models::GPT2LMHeadModel>(
        hearth::nn::models::GPT2Config::from_json_string(text, where));
  return std::make_shared<hearth::nn::models::LlamaForCausalLM>(
      hearth::nn::models::LlamaConfig::from_json_string(text, where));
}

}  // namespace run_clm
