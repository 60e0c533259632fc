// Low-rank adapters (LoRA) as PEFT makes them: chosen Linear layers (and
// GPT-2's Conv1D, hearth/nn/lora_layer.h) gain
//   y = x W^T + b + (alpha / r) * B(A(dropout(x)))
// with A [r, in] drawn as a Linear's weight is and B [out, r] zero, so that an
// adapted model starts equal to its base; every other parameter is frozen.
// Names and files follow PEFT's: the adapters are the submodules
// "<layer>.lora_A" and "<layer>.lora_B"; a saved adapter is a folder of
// adapter_config.json and adapter_model.safetensors whose tensors are named
// "base_model.model.<layer>.lora_A.weight", which PEFT's PeftModel loads.
#pragma once

#include <string>
#include <vector>

#include "hearth/nn/module.h"

namespace hearth::nn {

// The two files of a saved adapter, PEFT's names.
inline constexpr const char* kLoraConfigFile = "adapter_config.json";
inline constexpr const char* kLoraWeightsFile = "adapter_model.safetensors";

struct LoraConfig {
  int64_t r = 8;
  double alpha = 8.0;
  double dropout = 0.0;
  // Layer names: a Linear is adapted when its dotted name equals one of them
  // or ends with "." + one of them (PEFT's rule). {"all-linear"}: every Linear
  // but the output layer (named lm_head, classifier or score).
  std::vector<std::string> target_modules = {"q_proj", "v_proj"};
  // PEFT's rsLoRA: scaling alpha / sqrt(r) instead of alpha / r.
  bool use_rslora = false;
  // Recorded in adapter_config.json: what PEFT reloads the adapter onto.
  std::string base_model_name_or_path;
  std::string task_type = "CAUSAL_LM";

  double scaling() const;
};

// Adds an adapter to every matching Linear of `model` and freezes every
// parameter but the adapters'. Returns the adapted layers' names. A ValueError
// names the targets when nothing matches, and a layer adapted twice.
std::vector<std::string> apply_lora(Module& model, const LoraConfig& config);

// The adapters' tensors under PEFT's file names
// ("base_model.model.<layer>.lora_A.weight"), sharing storage.
StateDict lora_state_dict(const Module& model);

// Writes `dir`/adapter_config.json and `dir`/adapter_model.safetensors.
void save_lora_adapter(const std::string& dir, const Module& model, const LoraConfig& config);

// Reads `dir`'s adapter_config.json (every field checked, the file and the
// field named), adds the adapters it describes to `model` and loads their
// weights; every tensor of the file must be an adapter of a layer the config
// targets, with its shape. Returns the config read.
LoraConfig load_lora_adapter(const std::string& dir, Module& model);

// Loads `dir`/adapter_model.safetensors into the adapters `model` already has
// (a checkpoint of a LoRA run being resumed): the file must hold exactly
// those tensors, each with its shape.
void load_lora_weights(const std::string& dir, Module& model);

// Folds every adapter into its layer's weight (W += scaling * B A) and
// removes it: the model computes what it computed with the adapter, as
// PEFT's merge_and_unload. Parameters keep their requires_grad flags.
void merge_lora(Module& model);

}  // namespace hearth::nn
