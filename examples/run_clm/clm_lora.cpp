#include "examples/run_clm/clm_lora.h"

#include <iomanip>
#include <sstream>

namespace run_clm {

hearth::nn::LoraConfig lora_config_of(const ClmArguments& a, const hearth::nn::models::CausalLM& model) {
  hearth::nn::LoraConfig c;
  c.r = a.lora_r;
  c.alpha = a.lora_alpha;
  c.dropout = a.lora_dropout;
  c.base_model_name_or_path = a.model_name_or_path;
  c.task_type = "CAUSAL_LM";
  c.target_modules.clear();
  std::stringstream in(a.lora_target_modules);
  std::string name;
  while (std::getline(in, name, ','))
    if (!name.empty()) c.target_modules.push_back(name);
  if (c.target_modules.empty()) {
    // PEFT's defaults per architecture (TRANSFORMERS_MODELS_TO_LORA_TARGET_MODULES_MAPPING).
    if (model.model_type() == "gpt2")
      c.target_modules = {"c_attn"};
    else
      c.target_modules = {"q_proj", "v_proj"};
  }
  return c;
}

void add_adapters(hearth::nn::models::CausalLM& model, const ClmArguments& a, const hearth::nn::LoraConfig& config,
                  std::ostream& out) {
  // A bfloat16 base halves the frozen weights' memory; the adapters are made
  // in float32 beside it (lora_layer.h).
  if (a.lora_base_dtype == "bf16" || a.lora_base_dtype == "bfloat16") model.to(hearth::DType::bfloat16);
  const std::vector<std::string> adapted = hearth::nn::apply_lora(model, config);
  int64_t trainable = 0, total = 0;
  for (const auto& [name, p] : model.named_parameters()) {
    total += p.numel();
    if (p.requires_grad()) trainable += p.numel();
  }
  out << "run_clm: LoRA r=" << config.r << " alpha=" << config.alpha << " on " << adapted.size() << " layers; "
      << "trainable params: " << trainable << " || all params: " << total << " || trainable%: " << std::fixed
      << std::setprecision(4) << 100.0 * static_cast<double>(trainable) / static_cast<double>(total)
      << std::defaultfloat << "\n";
}

}  // namespace run_clm
