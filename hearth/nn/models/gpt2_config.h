// GPT2Config: the hyper-parameters of GPT-2 with Hugging Face's field names,
// read from and written to a model folder's config.json.
//
//   GPT2Config c = GPT2Config::from_json_file("gpt2/config.json");
//
// The defaults are the 124M "gpt2" checkpoint's. Reading is strict about the
// fields it knows (type and range; errors name the file and the field) and
// keeps the others (bos_token_id, task_specific_params, ...) so that a saved
// config.json still carries them.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace hearth::nn::models {

struct GPT2Config {
  int64_t vocab_size = 50257;
  int64_t n_positions = 1024;
  int64_t n_embd = 768;
  int64_t n_layer = 12;
  int64_t n_head = 12;
  // The MLP's inner width; null means 4 * n_embd.
  std::optional<int64_t> n_inner;
  // "gelu_new" (tanh approximation, GPT-2's), "gelu_pytorch_tanh" (the same),
  // "gelu" (exact), "relu", "silu"/"swish", "tanh".
  std::string activation_function = "gelu_new";
  double resid_pdrop = 0.1;
  double embd_pdrop = 0.1;
  double attn_pdrop = 0.1;
  double layer_norm_epsilon = 1e-5;
  double initializer_range = 0.02;
  // Scores divided by sqrt(head size); with scale_attn_by_inverse_layer_idx
  // also by (layer index + 1).
  bool scale_attn_weights = true;
  bool scale_attn_by_inverse_layer_idx = false;
  // Computes attention in float32 in transformers: the same function, kept for the file.
  bool reorder_and_upcast_attn = false;
  bool tie_word_embeddings = true;

  std::map<std::string, std::string> extra_fields;  // uninterpreted fields, as JSON text

  static constexpr int64_t kMaxSize = (int64_t{1} << 31) - 1;
  static constexpr int64_t kMaxLayers = 4096;

  int64_t inner_size() const { return n_inner.value_or(4 * n_embd); }
  int64_t head_size() const { return n_embd / n_head; }
  // Parameters of GPT2LMHeadModel built from this config, as a double.
  double parameter_count() const;

  // Throws ValueError "[GPT2Config] <where>: field \"<name>\": ..." for the
  // first bad field.
  void validate(const std::string& where = "config") const;

  // IoError when the file cannot be read; ValueError naming the file and the
  // field when it is not a GPT-2 config hearth can build.
  static GPT2Config from_json_file(const std::string& path);
  static GPT2Config from_json_string(const std::string& text, const std::string& where = "config");

  // config.json text, keys sorted: the known fields, model_type "gpt2",
  // `architectures` when given, torch_dtype when given, the extra fields.
  std::string to_json_string(const std::vector<std::string>& architectures = {},
                             const std::string& torch_dtype = "") const;
  void save(const std::string& path, const std::vector<std::string>& architectures = {},
            const std::string& torch_dtype = "") const;
};

}  // namespace hearth::nn::models
