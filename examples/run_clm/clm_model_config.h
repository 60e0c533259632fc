// run_clm.py's way to a new model without a config file: --model_type names
// the architecture, whose transformers defaults are the config, and
// --config_overrides "n_embd=64,n_layer=4" changes some of its fields.
#pragma once

#include <memory>
#include <string>

#include "hearth/nn/models/causal_lm.h"

namespace run_clm {

// The config.json text of `model_type`'s defaults (gpt2, llama, mistral,
// qwen2) with the overrides applied. As transformers' update_from_string:
// each key must be a field of the config, its value is read as the field's
// type (true/false for a boolean, an integer, a number, a string), and a
// field whose default is null cannot be set. ValueError naming the key.
std::string config_of_model_type(const std::string& model_type, const std::string& overrides);

// A freshly initialised model of that config (drawn from the global generator).
std::shared_ptr<hearth::nn::models::CausalLM> model_of_type(const std::string& model_type,
                                                            const std::string& overrides);

}  // namespace run_clm
