#include "hearth/nn/lora.h"

#include <cmath>
#include <filesystem>
#include <fstream>
#include <regex>
#include <set>

#include <nlohmann/json.hpp>

#include "hearth/autograd/grad_mode.h"
#include "hearth/core/errors.h"
#include "hearth/io/atomic_file.h"
#include "hearth/io/file_checks.h"
#include "hearth/io/json_integer.h"
#include "hearth/io/json_limits.h"
#include "hearth/io/safetensors.h"
#include "hearth/nn/linear.h"
#include "hearth/ops/linalg.h"

namespace hearth::nn {
namespace {

namespace fs = std::filesystem;
using json = nlohmann::json;

// PEFT's prefix: the PeftModel's base_model (LoraModel) holds the model as .model.
constexpr const char* kPeftPrefix = "base_model.model.";
// Ranks beyond this adapt nothing "low-rank"; a larger value is a corrupt file.
constexpr int64_t kMaxRank = 65536;

bool ends_with(const std::string& s, const std::string& tail) {
  return s.size() >= tail.size() && s.compare(s.size() - tail.size(), tail.size(), tail) == 0;
}

std::string last_component(const std::string& name) {
  const size_t dot = name.rfind('.');
  return dot == std::string::npos ? name : name.substr(dot + 1);
}

// The layer that produces the model's outputs (logits, class scores) is never
// adapted by "all-linear", as PEFT leaves out the output embedding.
bool is_output_layer(const std::string& name) {
  const std::string last = last_component(name);
  return last == "lm_head" || last == "classifier" || last == "score";
}

bool is_adapter(const std::string& name) {
  const std::string last = last_component(name);
  return last == "lora_A" || last == "lora_B";
}

// A target_modules entry given as a single string other than "all-linear" is
// a regular expression the whole name must match (PEFT's rule); a list names
// layers by their last components.
struct TargetRule {
  bool all_linear = false;
  std::optional<std::regex> pattern;
  std::vector<std::string> names;

  bool matches(const std::string& name) const {
    if (all_linear) return !is_output_layer(name);
    if (pattern) return std::regex_match(name, *pattern);
    for (const std::string& t : names)
      if (name == t || ends_with(name, "." + t)) return true;
    return false;
  }
};

TargetRule rule_of(const std::vector<std::string>& targets, bool as_pattern) {
  TargetRule rule;
  if (targets.size() == 1 && targets[0] == "all-linear") {
    rule.all_linear = true;
  } else if (as_pattern && targets.size() == 1) {
    try {
      rule.pattern.emplace(targets[0]);
    } catch (const std::regex_error& e) {
      HEARTH_THROW(ValueError, "[lora] target_modules: '", io::excerpt(targets[0]),
                   "' is not a regular expression: ", e.what());
    }
  } else {
    rule.names = targets;
  }
  return rule;
}

std::vector<std::string> adapt(Module& model, const LoraConfig& config, const TargetRule& rule) {
  HEARTH_CHECK(config.r >= 1 && config.r <= kMaxRank, ValueError, "[lora] r: expected an integer from 1 to ", kMaxRank,
               ", got ", config.r);
  HEARTH_CHECK(std::isfinite(config.alpha) && config.alpha > 0, ValueError,
               "[lora] lora_alpha: expected a positive number, got ", config.alpha);
  HEARTH_CHECK(config.dropout >= 0 && config.dropout < 1, ValueError,
               "[lora] lora_dropout: expected a number in [0, 1), got ", config.dropout);
  std::vector<std::pair<std::string, std::shared_ptr<LoraLayer>>> chosen;
  std::set<std::string> linear_names;
  for (auto& [name, m] : model.named_modules()) {
    auto lin = std::dynamic_pointer_cast<LoraLayer>(m);
    if (!lin || name.empty() || is_adapter(name)) continue;
    linear_names.insert(last_component(name));
    if (rule.matches(name)) chosen.emplace_back(name, lin);
  }
  if (chosen.empty()) {
    std::string known;
    for (const std::string& n : linear_names) known += (known.empty() ? "" : ", ") + n;
    std::string wanted;
    for (const std::string& n : config.target_modules) wanted += (wanted.empty() ? "" : ", ") + n;
    HEARTH_THROW(ValueError, "[lora] target_modules (", wanted, ") match no Linear (or Conv1D) layer of this ",
                 model.type_name(), "; its Linear and Conv1D layers are named ",
                 known.empty() ? std::string("(none)") : known);
  }
  model.requires_grad_(false);
  std::vector<std::string> names;
  for (auto& [name, lin] : chosen) {
    HEARTH_CHECK(!lin->has_lora(), ValueError, "[lora] ", name, " already has an adapter");
    lin->add_lora(config.r, config.scaling(), config.dropout);
    names.push_back(name);
  }
  return names;
}

const json& field(const json& j, const char* name, const std::string& path) {
  HEARTH_CHECK(j.contains(name), ValueError, "[lora] ", path, ": field '", name, "' is missing");
  return j.at(name);
}

double number_field(const json& j, const char* name, const std::string& path) {
  const json& v = field(j, name, path);
  HEARTH_CHECK(v.is_number(), ValueError, "[lora] ", path, ": field '", name, "': expected a number, got ",
               io::excerpt(v.dump()));
  return v.get<double>();
}

// Fields PEFT writes whose non-default values change the adapter's arithmetic
// in ways hearth does not implement: refused by name rather than misread.
void refuse_unsupported(const json& j, const std::string& path) {
  auto empty_or_null = [&](const char* name) {
    if (!j.contains(name)) return;
    const json& v = j.at(name);
    HEARTH_CHECK(v.is_null() || (v.is_object() && v.empty()) || (v.is_array() && v.empty()), NotImplementedError,
                 "[lora] ", path, ": field '", name, "' is ", io::excerpt(v.dump()),
                 "; hearth loads adapters without it (expected null or empty)");
  };
  for (const char* name : {"rank_pattern", "alpha_pattern", "modules_to_save", "layers_to_transform"})
    empty_or_null(name);
  if (j.contains("use_dora"))
    HEARTH_CHECK(j.at("use_dora").is_boolean() && !j.at("use_dora").get<bool>(), NotImplementedError, "[lora] ", path,
                 ": field 'use_dora' is ", j.at("use_dora").dump(), "; hearth loads plain LoRA adapters (false)");
  if (j.contains("bias"))
    HEARTH_CHECK(j.at("bias") == "none", NotImplementedError, "[lora] ", path, ": field 'bias' is ",
                 io::excerpt(j.at("bias").dump()), "; hearth loads adapters without trained biases (\"none\")");
}

LoraConfig read_config(const std::string& path, bool* targets_are_pattern) {
  HEARTH_CHECK(fs::exists(path), IoError, "[lora] ", path, ": no such file (an adapter folder holds ", kLoraConfigFile,
               " and ", kLoraWeightsFile, ")");
  io::check_regular_file(path, "[lora]");
  std::ifstream in(path, std::ios::binary);
  HEARTH_CHECK(in.good(), IoError, "[lora] cannot read ", path);
  const json j = json::parse(io::read_json_text(in, "[lora] " + path), nullptr, false);
  HEARTH_CHECK(!j.is_discarded() && j.is_object(), ValueError, "[lora] ", path, ": expected a JSON object");
  const json& type = field(j, "peft_type", path);
  HEARTH_CHECK(type == "LORA", NotImplementedError, "[lora] ", path, ": field 'peft_type': expected \"LORA\", got ",
               io::excerpt(type.dump()));
  refuse_unsupported(j, path);
  LoraConfig c;
  const json& r = field(j, "r", path);
  HEARTH_CHECK(io::json_integer_fits<int64_t>(r) && r.get<int64_t>() >= 1 && r.get<int64_t>() <= kMaxRank, ValueError,
               "[lora] ", path, ": field 'r': expected an integer from 1 to ", kMaxRank, ", got ",
               io::excerpt(r.dump()));
  c.r = r.get<int64_t>();
  c.alpha = number_field(j, "lora_alpha", path);
  HEARTH_CHECK(std::isfinite(c.alpha) && c.alpha > 0, ValueError, "[lora] ", path,
               ": field 'lora_alpha': expected a positive number, got ", c.alpha);
  c.dropout = j.contains("lora_dropout") ? number_field(j, "lora_dropout", path) : 0.0;
  HEARTH_CHECK(c.dropout >= 0 && c.dropout < 1, ValueError, "[lora] ", path,
               ": field 'lora_dropout': expected a number in [0, 1), got ", c.dropout);
  if (j.contains("use_rslora")) {
    HEARTH_CHECK(j.at("use_rslora").is_boolean(), ValueError, "[lora] ", path,
                 ": field 'use_rslora': expected true or false, got ", io::excerpt(j.at("use_rslora").dump()));
    c.use_rslora = j.at("use_rslora").get<bool>();
  }
  const json& targets = field(j, "target_modules", path);
  c.target_modules.clear();
  *targets_are_pattern = targets.is_string();
  if (targets.is_string()) {
    c.target_modules.push_back(targets.get<std::string>());
  } else {
    HEARTH_CHECK(targets.is_array() && !targets.empty(), ValueError, "[lora] ", path,
                 ": field 'target_modules': expected a list of layer names or a string, got ",
                 io::excerpt(targets.dump()));
    for (const json& t : targets) {
      HEARTH_CHECK(t.is_string() && !t.get<std::string>().empty(), ValueError, "[lora] ", path,
                   ": field 'target_modules': expected layer names, got ", io::excerpt(t.dump()));
      c.target_modules.push_back(t.get<std::string>());
    }
  }
  for (const char* name : {"base_model_name_or_path", "task_type"}) {
    if (!j.contains(name) || j.at(name).is_null()) continue;
    HEARTH_CHECK(j.at(name).is_string(), ValueError, "[lora] ", path, ": field '", name, "': expected a string, got ",
                 io::excerpt(j.at(name).dump()));
    (std::string(name) == "task_type" ? c.task_type : c.base_model_name_or_path) = j.at(name).get<std::string>();
  }
  return c;
}

json config_json(const LoraConfig& c, bool fan_in_fan_out) {
  // Every field PEFT's LoraConfig writes that a loader may look for, with the
  // values that describe what hearth trained.
  json j;
  j["alpha_pattern"] = json::object();
  j["auto_mapping"] = nullptr;
  j["base_model_name_or_path"] = c.base_model_name_or_path.empty() ? json(nullptr) : json(c.base_model_name_or_path);
  j["bias"] = "none";
  j["fan_in_fan_out"] = fan_in_fan_out;
  j["inference_mode"] = true;
  j["init_lora_weights"] = true;
  j["layers_pattern"] = nullptr;
  j["layers_to_transform"] = nullptr;
  j["lora_alpha"] = c.alpha;
  j["lora_dropout"] = c.dropout;
  j["modules_to_save"] = nullptr;
  j["peft_type"] = "LORA";
  j["r"] = c.r;
  j["rank_pattern"] = json::object();
  j["revision"] = nullptr;
  j["target_modules"] =
      c.target_modules.size() == 1 && c.target_modules[0] == "all-linear" ? json("all-linear") : json(c.target_modules);
  j["task_type"] = c.task_type.empty() ? json(nullptr) : json(c.task_type);
  j["use_dora"] = false;
  j["use_rslora"] = c.use_rslora;
  return j;
}

}  // namespace

double LoraConfig::scaling() const {
  return use_rslora ? alpha / std::sqrt(static_cast<double>(r)) : alpha / static_cast<double>(r);
}

std::vector<std::string> apply_lora(Module& model, const LoraConfig& config) {
  return adapt(model, config, rule_of(config.target_modules, /*as_pattern=*/false));
}

StateDict lora_state_dict(const Module& model) {
  StateDict out;
  for (auto& [name, m] : const_cast<Module&>(model).named_modules()) {
    auto lin = std::dynamic_pointer_cast<LoraLayer>(m);
    if (!lin || !lin->has_lora()) continue;
    out[kPeftPrefix + name + ".lora_A.weight"] = lin->lora_A->weight.detach();
    out[kPeftPrefix + name + ".lora_B.weight"] = lin->lora_B->weight.detach();
  }
  return out;
}

void save_lora_adapter(const std::string& dir, const Module& model, const LoraConfig& config) {
  StateDict tensors = lora_state_dict(model);
  HEARTH_CHECK(!tensors.empty(), ValueError, "[lora] save_lora_adapter: the model has no adapter (apply_lora first)");
  fs::create_directories(dir);
  io::save_safetensors((fs::path(dir) / kLoraWeightsFile).string(), tensors, {{"format", "pt"}});
  // PEFT records fan_in_fan_out for adapters of [in, out] weights (GPT-2's Conv1D).
  bool fan_in_fan_out = false;
  for (auto& [name, m] : const_cast<Module&>(model).named_modules()) {
    auto layer = std::dynamic_pointer_cast<LoraLayer>(m);
    if (layer && layer->has_lora() && layer->lora_fan_in_fan_out()) fan_in_fan_out = true;
  }
  io::write_file_atomic((fs::path(dir) / kLoraConfigFile).string(), config_json(config, fan_in_fan_out).dump(2) + "\n");
}

namespace {

// Copies the adapter tensors of `weights_path` into the adapters `model`
// already has: the file must hold exactly those, each with its shape.
void copy_adapter_weights(const std::string& weights_path, const std::string& described_by, Module& model) {
  std::map<std::string, Tensor> saved = io::load_safetensors(weights_path);
  NoGradGuard no_grad;
  const StateDict live = lora_state_dict(model);
  for (const auto& [key, t] : saved)
    HEARTH_CHECK(live.count(key) > 0, ValueError, "[lora] ", weights_path, ": tensor '", io::excerpt(key),
                 "' is not an adapter of a layer ", described_by, " in this ", model.type_name());
  for (const auto& [key, dst] : live) {
    auto it = saved.find(key);
    HEARTH_CHECK(it != saved.end(), ValueError, "[lora] ", weights_path, ": tensor '", key, "' is missing");
    HEARTH_CHECK(it->second.shape() == dst.shape(), ShapeError, "[lora] ", weights_path, ": tensor '", key,
                 "' has shape ", it->second.shape_string(), ", expected ", dst.shape_string());
    dst.copy_(it->second.to(dst.device(), dst.dtype()));
  }
}

}  // namespace

LoraConfig load_lora_adapter(const std::string& dir, Module& model) {
  const std::string config_path = (fs::path(dir) / kLoraConfigFile).string();
  bool as_pattern = false;
  LoraConfig config = read_config(config_path, &as_pattern);
  const std::string weights_path = (fs::path(dir) / kLoraWeightsFile).string();
  HEARTH_CHECK(fs::exists(weights_path), IoError, "[lora] ", dir, ": no ", kLoraWeightsFile,
               " (hearth reads adapters saved as safetensors)");
  adapt(model, config, rule_of(config.target_modules, as_pattern));
  copy_adapter_weights(weights_path, config_path + " targets", model);
  return config;
}

void load_lora_weights(const std::string& dir, Module& model) {
  HEARTH_CHECK(!lora_state_dict(model).empty(), ValueError, "[lora] load_lora_weights: the model has no adapter");
  const std::string weights_path = (fs::path(dir) / kLoraWeightsFile).string();
  HEARTH_CHECK(fs::exists(weights_path), IoError, "[lora] ", dir, ": no ", kLoraWeightsFile,
               " (hearth reads adapters saved as safetensors)");
  copy_adapter_weights(weights_path, "that has one", model);
}

void merge_lora(Module& model) {
  NoGradGuard no_grad;
  for (auto& [name, m] : model.named_modules()) {
    auto layer = std::dynamic_pointer_cast<LoraLayer>(m);
    if (layer && layer->has_lora()) layer->merge_lora();
  }
}

}  // namespace hearth::nn
