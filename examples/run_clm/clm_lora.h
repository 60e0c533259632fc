// run_clm's LoRA training: the flags turned into PEFT's LoraConfig, the base
// weights frozen (and kept in bfloat16 with --lora_base_dtype bf16), only
// the adapters trained; the adapter saved alone in PEFT's files.
#pragma once

#include <ostream>
#include <string>

#include "examples/run_clm/clm_arguments.h"
#include "hearth/nn/lora.h"
#include "hearth/nn/models/causal_lm.h"

namespace run_clm {

// The LoraConfig of the flags: target modules from --lora_target_modules
// (comma-separated, or all-linear), else PEFT's defaults for the
// architecture: c_attn for GPT-2, q_proj and v_proj for the Llama family.
hearth::nn::LoraConfig lora_config_of(const ClmArguments& a, const hearth::nn::models::CausalLM& model);

// Applies the adapters and prints PEFT's print_trainable_parameters line.
void add_adapters(hearth::nn::models::CausalLM& model, const ClmArguments& a, const hearth::nn::LoraConfig& config,
                  std::ostream& out);

}  // namespace run_clm
