// GPT2Config and LlamaConfig: Hugging Face's config.json files of real
// checkpoints parse to the right fields; bad files are refused with the file,
// the field and what was expected; what is saved reads back the same.
#include <string>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "hearth/core/errors.h"
#include "hearth/nn/models/causal_lm.h"
#include "hearth/nn/models/gpt2_config.h"
#include "hearth/nn/models/llama_config.h"
#include "tests/support/temp_dir.h"
#include "tests/unit/nn/nn_testing.h"

namespace hearth {
namespace {

using nn::models::GPT2Config;
using nn::models::LlamaConfig;
using testing::contains;

template <typename F>
std::string error_of(F&& f) {
  try {
    f();
  } catch (const Error& e) {
    return e.what();
  }
  return "no error";
}

// The config.json of the 124M "gpt2" checkpoint.
const char* kGpt2 = R"({"activation_function": "gelu_new", "architectures": ["GPT2LMHeadModel"], "attn_pdrop": 0.1,
  "bos_token_id": 50256, "embd_pdrop": 0.1, "eos_token_id": 50256, "initializer_range": 0.02,
  "layer_norm_epsilon": 1e-05, "model_type": "gpt2", "n_ctx": 1024, "n_embd": 768, "n_head": 12, "n_layer": 12,
  "n_positions": 1024, "resid_pdrop": 0.1, "summary_activation": null, "summary_first_dropout": 0.1,
  "summary_proj_to_labels": true, "summary_type": "cls_index", "summary_use_proj": true,
  "task_specific_params": {"text-generation": {"do_sample": true, "max_length": 50}}, "vocab_size": 50257})";

// Llama 3.2 1B: grouped-query attention, llama3 rope scaling, tied embeddings.
const char* kLlama32 = R"({"architectures": ["LlamaForCausalLM"], "attention_bias": false, "attention_dropout": 0.0,
  "bos_token_id": 128000, "eos_token_id": 128001, "head_dim": 64, "hidden_act": "silu", "hidden_size": 2048,
  "initializer_range": 0.02, "intermediate_size": 8192, "max_position_embeddings": 131072, "mlp_bias": false,
  "model_type": "llama", "num_attention_heads": 32, "num_hidden_layers": 16, "num_key_value_heads": 8,
  "pretraining_tp": 1, "rms_norm_eps": 1e-05, "rope_scaling": {"factor": 32.0, "high_freq_factor": 4.0,
  "low_freq_factor": 1.0, "original_max_position_embeddings": 8192, "rope_type": "llama3"}, "rope_theta": 500000.0,
  "tie_word_embeddings": true, "torch_dtype": "bfloat16", "transformers_version": "4.45.0.dev0", "use_cache": true,
  "vocab_size": 128256})";

const char* kQwen2 = R"({"architectures": ["Qwen2ForCausalLM"], "attention_dropout": 0.0, "bos_token_id": 151643,
  "eos_token_id": 151643, "hidden_act": "silu", "hidden_size": 896, "initializer_range": 0.02,
  "intermediate_size": 4864, "max_position_embeddings": 131072, "max_window_layers": 24, "model_type": "qwen2",
  "num_attention_heads": 14, "num_hidden_layers": 24, "num_key_value_heads": 2, "rms_norm_eps": 1e-06,
  "rope_theta": 1000000.0, "sliding_window": 131072, "tie_word_embeddings": true, "torch_dtype": "bfloat16",
  "use_cache": true, "use_sliding_window": false, "vocab_size": 151936})";

const char* kMistral = R"({"architectures": ["MistralForCausalLM"], "bos_token_id": 1, "eos_token_id": 2,
  "hidden_act": "silu", "hidden_size": 4096, "initializer_range": 0.02, "intermediate_size": 14336,
  "max_position_embeddings": 32768, "model_type": "mistral", "num_attention_heads": 32, "num_hidden_layers": 32,
  "num_key_value_heads": 8, "rms_norm_eps": 1e-05, "rope_theta": 10000.0, "sliding_window": 4096,
  "tie_word_embeddings": false, "torch_dtype": "bfloat16", "use_cache": true, "vocab_size": 32000})";

// A config with one field replaced (or removed, for a null replacement).
std::string with(const char* base, const std::string& field, const nlohmann::json& value) {
  nlohmann::json j = nlohmann::json::parse(base);
  if (value.is_discarded())
    j.erase(field);
  else
    j[field] = value;
  return j.dump();
}
const nlohmann::json kRemove = nlohmann::json(nlohmann::json::value_t::discarded);

TEST(NnCausalLmConfig, Gpt2CheckpointConfigParses) {
  const GPT2Config c = GPT2Config::from_json_string(kGpt2, "gpt2/config.json");
  EXPECT_EQ(c.vocab_size, 50257);
  EXPECT_EQ(c.n_positions, 1024);
  EXPECT_EQ(c.n_embd, 768);
  EXPECT_EQ(c.n_layer, 12);
  EXPECT_EQ(c.n_head, 12);
  EXPECT_FALSE(c.n_inner.has_value());
  EXPECT_EQ(c.inner_size(), 4 * 768) << "n_inner null means 4 * n_embd";
  EXPECT_EQ(c.activation_function, "gelu_new");
  EXPECT_DOUBLE_EQ(c.layer_norm_epsilon, 1e-5);
  EXPECT_TRUE(c.tie_word_embeddings) << "GPT-2 ties by default";
  EXPECT_TRUE(c.extra_fields.count("task_specific_params"));
  EXPECT_TRUE(c.extra_fields.count("bos_token_id"));
  EXPECT_NEAR(c.parameter_count(), 124.44e6, 0.01e6);
}

TEST(NnCausalLmConfig, Gpt2ConfigRoundTrips) {
  GPT2Config c = GPT2Config::from_json_string(with(kGpt2, "n_inner", 1000));
  c.tie_word_embeddings = false;
  const std::string text = c.to_json_string({"GPT2LMHeadModel"}, "float32");
  const nlohmann::json j = nlohmann::json::parse(text);
  EXPECT_EQ(j["model_type"], "gpt2");
  EXPECT_EQ(j["architectures"][0], "GPT2LMHeadModel");
  EXPECT_EQ(j["torch_dtype"], "float32");
  EXPECT_EQ(j["task_specific_params"]["text-generation"]["max_length"], 50);
  const GPT2Config back = GPT2Config::from_json_string(text);
  EXPECT_EQ(back.n_inner, 1000);
  EXPECT_FALSE(back.tie_word_embeddings);
  EXPECT_EQ(back.to_json_string({"GPT2LMHeadModel"}, "float32"), text);
}

TEST(NnCausalLmConfig, BadGpt2ConfigsNameTheFileAndField) {
  auto err = [](const std::string& text) {
    return error_of([&] { GPT2Config::from_json_string(text, "m/config.json"); });
  };
  std::string e = err(with(kGpt2, "n_head", 7));
  EXPECT_TRUE(contains(e, "[GPT2Config] m/config.json: field \"n_head\"") && contains(e, "not a multiple")) << e;
  e = err(with(kGpt2, "vocab_size", "many"));
  EXPECT_TRUE(contains(e, "field \"vocab_size\": expected an integer")) << e;
  e = err(with(kGpt2, "n_embd", 0));
  EXPECT_TRUE(contains(e, "field \"n_embd\": expected a positive integer, got 0")) << e;
  e = err(with(kGpt2, "n_positions", int64_t{1} << 40));
  EXPECT_TRUE(contains(e, "field \"n_positions\": expected at most")) << e;
  e = err(with(kGpt2, "n_layer", 100000));
  EXPECT_TRUE(contains(e, "field \"n_layer\"")) << e;
  e = err(with(kGpt2, "activation_function", "gelu_fast_and_loose"));
  EXPECT_TRUE(contains(e, "field \"activation_function\"") && contains(e, "gelu_new")) << e;
  e = err(with(kGpt2, "attn_pdrop", 1.0));
  EXPECT_TRUE(contains(e, "field \"attn_pdrop\": expected a probability")) << e;
  e = err(with(kGpt2, "layer_norm_epsilon", -1));
  EXPECT_TRUE(contains(e, "field \"layer_norm_epsilon\"")) << e;
  e = err(with(kGpt2, "tie_word_embeddings", "yes"));
  EXPECT_TRUE(contains(e, "field \"tie_word_embeddings\": expected true or false")) << e;
  e = err(with(kGpt2, "model_type", "llama"));
  EXPECT_TRUE(contains(e, "field \"model_type\": expected \"gpt2\"")) << e;
  e = err(with(kGpt2, "add_cross_attention", true));
  EXPECT_TRUE(contains(e, "field \"add_cross_attention\"")) << e;
  e = err("[1, 2]");
  EXPECT_TRUE(contains(e, "expected a JSON object")) << e;
  e = err("{\"n_embd\": ");
  EXPECT_TRUE(contains(e, "not valid JSON")) << e;
  // Each size alone is fine but the model would not be addressable.
  nlohmann::json huge = nlohmann::json::parse(kGpt2);
  huge["n_embd"] = 1 << 30;
  huge["n_head"] = 1;
  huge["vocab_size"] = (int64_t{1} << 31) - 1;
  e = err(huge.dump());
  EXPECT_TRUE(contains(e, "more bytes than fit in int64")) << e;
}

TEST(NnCausalLmConfig, LlamaFamilyConfigsParse) {
  const LlamaConfig llama = LlamaConfig::from_json_string(kLlama32, "Llama-3.2-1B/config.json");
  EXPECT_EQ(llama.model_type, "llama");
  EXPECT_EQ(llama.kv_heads(), 8);
  EXPECT_EQ(llama.head_size(), 64);
  EXPECT_TRUE(llama.tie_word_embeddings);
  ASSERT_TRUE(llama.rope_scaling.has_value());
  EXPECT_EQ(llama.rope_scaling->rope_type, "llama3");
  EXPECT_DOUBLE_EQ(llama.rope_scaling->factor, 32.0);
  EXPECT_EQ(llama.rope_scaling->original_max_position_embeddings, 8192);
  EXPECT_DOUBLE_EQ(llama.rope_theta, 500000.0);
  EXPECT_FALSE(llama.qkv_bias());
  EXPECT_EQ(llama.architecture(), "LlamaForCausalLM");
  EXPECT_NEAR(llama.parameter_count(), 1.236e9, 0.001e9);
  EXPECT_TRUE(llama.extra_fields.count("bos_token_id"));

  const LlamaConfig qwen = LlamaConfig::from_json_string(kQwen2);
  EXPECT_EQ(qwen.model_type, "qwen2");
  EXPECT_TRUE(qwen.qkv_bias()) << "Qwen2 has biases on q, k and v";
  EXPECT_FALSE(qwen.o_bias());
  EXPECT_EQ(qwen.head_size(), 64);
  EXPECT_EQ(qwen.max_sequence_length(), 131072) << "no sliding window without use_sliding_window";
  EXPECT_EQ(qwen.architecture(), "Qwen2ForCausalLM");
  EXPECT_NEAR(qwen.parameter_count(), 494.0e6, 1e6);

  const LlamaConfig mistral = LlamaConfig::from_json_string(kMistral);
  EXPECT_EQ(mistral.kv_heads(), 8);
  EXPECT_EQ(mistral.max_sequence_length(), 4096) << "longer sequences would need the sliding window";
  EXPECT_FALSE(mistral.rope_scaling.has_value());
  EXPECT_NEAR(mistral.parameter_count(), 7.24e9, 0.01e9);

  // Fields a config omits take its class's defaults.
  const LlamaConfig bare = LlamaConfig::from_json_string(R"({"model_type": "llama", "hidden_size": 64,
      "num_attention_heads": 4, "intermediate_size": 128, "num_hidden_layers": 1, "vocab_size": 100})");
  EXPECT_EQ(bare.kv_heads(), 4);
  EXPECT_EQ(bare.head_size(), 16);
  EXPECT_FALSE(bare.tie_word_embeddings);
  EXPECT_FALSE(bare.rope_scaling.has_value());
  EXPECT_DOUBLE_EQ(bare.rope_theta, 10000.0);
  EXPECT_EQ(LlamaConfig::from_json_string(R"({"model_type": "mistral"})").kv_heads(), 8);

  // attention_bias puts biases on all four projections of Llama.
  const LlamaConfig biased = LlamaConfig::from_json_string(with(kLlama32, "attention_bias", true));
  EXPECT_TRUE(biased.qkv_bias());
  EXPECT_TRUE(biased.o_bias());

  // transformers 5 writes rope_theta and the scaling into rope_parameters.
  nlohmann::json v5 = nlohmann::json::parse(kLlama32);
  v5.erase("rope_scaling");
  v5.erase("rope_theta");
  v5["rope_parameters"] = {{"rope_type", "llama3"},   {"rope_theta", 250000.0},
                           {"factor", 8.0},           {"low_freq_factor", 1.0},
                           {"high_freq_factor", 4.0}, {"original_max_position_embeddings", 8192}};
  const LlamaConfig from_v5 = LlamaConfig::from_json_string(v5.dump());
  EXPECT_DOUBLE_EQ(from_v5.rope_theta, 250000.0);
  ASSERT_TRUE(from_v5.rope_scaling.has_value());
  EXPECT_DOUBLE_EQ(from_v5.rope_scaling->factor, 8.0);
}

TEST(NnCausalLmConfig, LlamaConfigRoundTrips) {
  for (const char* text : {kLlama32, kQwen2, kMistral}) {
    const LlamaConfig c = LlamaConfig::from_json_string(text);
    const std::string saved = c.to_json_string({c.architecture()}, "float32");
    const LlamaConfig back = LlamaConfig::from_json_string(saved);
    EXPECT_EQ(back.to_json_string({c.architecture()}, "float32"), saved);
    EXPECT_EQ(back.model_type, c.model_type);
    EXPECT_EQ(back.kv_heads(), c.kv_heads());
    EXPECT_EQ(back.head_size(), c.head_size());
    EXPECT_EQ(back.rope_scaling.has_value(), c.rope_scaling.has_value());
    EXPECT_EQ(back.tie_word_embeddings, c.tie_word_embeddings);
    EXPECT_EQ(back.max_sequence_length(), c.max_sequence_length());
    EXPECT_EQ(back.extra_fields, c.extra_fields);
  }
}

TEST(NnCausalLmConfig, BadLlamaConfigsNameTheFileAndField) {
  auto err = [](const std::string& text) {
    return error_of([&] { LlamaConfig::from_json_string(text, "m/config.json"); });
  };
  std::string e = err(with(kLlama32, "model_type", "gemma"));
  EXPECT_TRUE(contains(e, "[LlamaConfig] m/config.json: field \"model_type\"") && contains(e, "\"gemma\"") &&
              contains(e, "\"llama\", \"mistral\" or \"qwen2\""))
      << e;
  e = err(with(kLlama32, "model_type", kRemove));
  EXPECT_TRUE(contains(e, "field \"model_type\": missing")) << e;
  e = err(with(kLlama32, "num_key_value_heads", 5));
  EXPECT_TRUE(contains(e, "field \"num_key_value_heads\"") && contains(e, "not a multiple")) << e;
  e = err(with(kLlama32, "head_dim", 63));
  EXPECT_TRUE(contains(e, "field \"head_dim\"") && contains(e, "odd")) << e;
  e = err(with(with(kLlama32, "head_dim", kRemove).c_str(), "num_attention_heads", 30));
  EXPECT_TRUE(contains(e, "field \"num_attention_heads\"") && contains(e, "not a multiple")) << e;
  e = err(with(kLlama32, "hidden_act", "gelu"));
  EXPECT_TRUE(contains(e, "field \"hidden_act\": expected \"silu\"")) << e;
  e = err(with(kLlama32, "rope_scaling", {{"rope_type", "yarn"}, {"factor", 4.0}}));
  EXPECT_TRUE(contains(e, "field \"rope_scaling\"") && contains(e, "\"yarn\" is not supported") &&
              contains(e, "\"llama3\""))
      << e;
  e = err(with(kLlama32, "rope_scaling", {{"type", "linear"}, {"factor", 4.0}}));
  EXPECT_TRUE(contains(e, "\"linear\" is not supported")) << e;
  e = err(with(kLlama32, "rope_scaling", {{"rope_type", "llama3"}, {"factor", 8.0}}));
  EXPECT_TRUE(contains(e, "field \"rope_scaling\"") && contains(e, "low_freq_factor")) << e;
  e = err(with(kLlama32, "rope_scaling",
               {{"rope_type", "llama3"},
                {"factor", 8.0},
                {"low_freq_factor", 4.0},
                {"high_freq_factor", 4.0},
                {"original_max_position_embeddings", 8192}}));
  EXPECT_TRUE(contains(e, "high_freq_factor")) << e;
  e = err(with(kLlama32, "rope_scaling", "llama3"));
  EXPECT_TRUE(contains(e, "field \"rope_scaling\": expected null or an object")) << e;
  e = err(with(kLlama32, "rope_theta", 0));
  EXPECT_TRUE(contains(e, "field \"rope_theta\"")) << e;
  e = err(with(kLlama32, "rms_norm_eps", 0));
  EXPECT_TRUE(contains(e, "field \"rms_norm_eps\"")) << e;
  e = err(with(kLlama32, "pad_token_id", 128256));
  EXPECT_TRUE(contains(e, "field \"pad_token_id\"")) << e;
  e = err(with(kLlama32, "vocab_size", -3));
  EXPECT_TRUE(contains(e, "field \"vocab_size\": expected a positive integer, got -3")) << e;
  e = err(with(kLlama32, "num_hidden_layers", 1.5));
  EXPECT_TRUE(contains(e, "field \"num_hidden_layers\": expected an integer")) << e;
  e = err(with(kLlama32, "attention_dropout", 2.0));
  EXPECT_TRUE(contains(e, "field \"attention_dropout\"")) << e;
}

TEST(NnCausalLmConfig, TheRegistryPicksTheArchitectureByModelType) {
  testing::TempDir dir;
  EXPECT_EQ(nn::models::causal_lm_model_types(), (std::vector<std::string>{"gpt2", "llama", "mistral", "qwen2"}));
  const std::string bert = dir.write("bert.json", R"({"model_type": "bert", "hidden_size": 8})");
  std::string e = error_of([&] { nn::models::causal_lm_from_config(bert); });
  EXPECT_TRUE(contains(e, "field \"model_type\"") && contains(e, "\"bert\"") &&
              contains(e, "\"gpt2\", \"llama\", \"mistral\" or \"qwen2\""))
      << e;
  e = error_of([&] { nn::models::causal_lm_from_config(dir.write("none.json", "{}")); });
  EXPECT_TRUE(contains(e, "field \"model_type\"")) << e;
  e = error_of([&] { nn::models::causal_lm_from_config(dir.file("missing.json")); });
  EXPECT_TRUE(contains(e, "does not exist")) << e;

  const std::string tiny_gpt2 = dir.write("gpt2.json", R"({"model_type": "gpt2", "vocab_size": 11, "n_positions": 8,
      "n_embd": 8, "n_layer": 1, "n_head": 2})");
  auto gpt2 = nn::models::causal_lm_from_config(tiny_gpt2);
  EXPECT_EQ(gpt2->model_type(), "gpt2");
  EXPECT_EQ(gpt2->type_name(), "GPT2LMHeadModel");
  EXPECT_EQ(gpt2->max_sequence_length(), 8);
  const std::string tiny_qwen = dir.write("qwen.json", R"({"model_type": "qwen2", "vocab_size": 11,
      "hidden_size": 8, "intermediate_size": 12, "num_hidden_layers": 1, "num_attention_heads": 2,
      "num_key_value_heads": 1, "max_position_embeddings": 16})");
  auto qwen = nn::models::causal_lm_from_config(tiny_qwen);
  EXPECT_EQ(qwen->model_type(), "qwen2");
  EXPECT_EQ(qwen->type_name(), "Qwen2ForCausalLM");
  EXPECT_EQ(qwen->vocab_size(), 11);
}

}  // namespace
}  // namespace hearth
