// LlamaConfig: the hyper-parameters of Llama and the models built the same way
// (model_type "llama", "mistral", "qwen2"; SmolLM and TinyLlama are "llama"),
// with Hugging Face's field names, read from and written to config.json.
//
//   LlamaConfig c = LlamaConfig::from_json_file("TinyLlama-1.1B/config.json");
//
// The architectures differ only in what the config says: Qwen2 has biases on
// the q, k and v projections (Llama when attention_bias is true, on o too);
// Mistral's sliding window only matters beyond sliding_window tokens, which
// hearth refuses rather than mask differently. Fields a config omits take
// the defaults of its model_type's class in transformers. Reading is strict
// about the fields it knows (errors name the file and the field) and keeps the
// others (bos_token_id, eos_token_id, ...) for the saved config.json.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace hearth::nn::models {

// rope_scaling: how the rotary frequencies are adapted to long contexts.
// Only Llama 3.1's rule ("llama3") exists besides none ("default").
struct RopeScaling {
  std::string rope_type = "default";
  double factor = 8.0;
  double low_freq_factor = 1.0;
  double high_freq_factor = 4.0;
  int64_t original_max_position_embeddings = 8192;
};

struct LlamaConfig {
  std::string model_type = "llama";  // "llama", "mistral" or "qwen2"
  int64_t vocab_size = 32000;
  int64_t hidden_size = 4096;
  int64_t intermediate_size = 11008;
  int64_t num_hidden_layers = 32;
  int64_t num_attention_heads = 32;
  // Grouped-query attention: heads share key/value heads in groups; null means
  // num_attention_heads (plain multi-head attention).
  std::optional<int64_t> num_key_value_heads;
  // Null means hidden_size / num_attention_heads.
  std::optional<int64_t> head_dim;
  std::string hidden_act = "silu";  // "silu" (= "swish") only
  int64_t max_position_embeddings = 2048;
  double rms_norm_eps = 1e-6;
  double rope_theta = 10000.0;
  std::optional<RopeScaling> rope_scaling;  // null: plain rotary embeddings
  bool attention_bias = false;              // bias on q, k, v and o (qwen2: on q, k, v always)
  bool mlp_bias = false;
  bool tie_word_embeddings = false;
  double initializer_range = 0.02;
  double attention_dropout = 0.0;
  // The embedding row of padding (zero at initialisation, no gradient), or none.
  std::optional<int64_t> pad_token_id;
  // Mistral's and Qwen2's sliding-window attention (Qwen2's only with
  // use_sliding_window): sequences longer than it are refused.
  std::optional<int64_t> sliding_window;
  bool use_sliding_window = false;

  std::map<std::string, std::string> extra_fields;  // uninterpreted fields, as JSON text

  static constexpr int64_t kMaxSize = (int64_t{1} << 31) - 1;
  static constexpr int64_t kMaxLayers = 4096;

  int64_t kv_heads() const { return num_key_value_heads.value_or(num_attention_heads); }
  int64_t head_size() const { return head_dim.value_or(hidden_size / num_attention_heads); }
  bool qkv_bias() const { return attention_bias || model_type == "qwen2"; }
  bool o_bias() const { return attention_bias && model_type != "qwen2"; }
  // The longest sequence attention treats as transformers does.
  int64_t max_sequence_length() const;
  // "LlamaForCausalLM", "MistralForCausalLM", "Qwen2ForCausalLM".
  std::string architecture() const;
  double parameter_count() const;

  void validate(const std::string& where = "config") const;

  // A config of `model_type` with its class's defaults.
  static LlamaConfig defaults_for(const std::string& model_type);
  // IoError when the file cannot be read; ValueError naming the file and the
  // field when it is not a config hearth can build (other model_types are
  // refused naming the supported ones; other rope types likewise).
  static LlamaConfig from_json_file(const std::string& path);
  static LlamaConfig from_json_string(const std::string& text, const std::string& where = "config");

  std::string to_json_string(const std::vector<std::string>& architectures = {},
                             const std::string& torch_dtype = "") const;
  void save(const std::string& path, const std::vector<std::string>& architectures = {},
            const std::string& torch_dtype = "") const;
};

}  // namespace hearth::nn::models
