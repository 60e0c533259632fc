// Llama (Touvron et al. 2023) and the models of the same shape (Mistral,
// Qwen2, SmolLM, TinyLlama) as Hugging Face's transformers builds them:
// LlamaModel (the decoder stack) and LlamaForCausalLM, with their parameter
// names and shapes:
//
//   model.embed_tokens
//   model.layers.<i>.input_layernorm                       RMSNorm
//   model.layers.<i>.self_attn.{q,k,v,o}_proj               grouped-query attention, rotary positions
//   model.layers.<i>.post_attention_layernorm              RMSNorm
//   model.layers.<i>.mlp.{gate,up,down}_proj               SwiGLU: down(silu(gate(x)) * up(x))
//   model.norm
//   lm_head.weight                                         absent when tie_word_embeddings
//
//   auto model = LlamaForCausalLM::from_pretrained("models/SmolLM-135M");
//   auto out = model->forward(input_ids, attention_mask, labels);
#pragma once

#include <memory>
#include <vector>

#include "hearth/nn/container.h"
#include "hearth/nn/embedding.h"
#include "hearth/nn/linear.h"
#include "hearth/nn/models/causal_lm.h"
#include "hearth/nn/models/llama_config.h"

namespace hearth::nn::models {

// x * rsqrt(mean(x^2) + eps) computed in float32 (float64 for float64 x),
// rounded back to x's dtype, times weight: transformers' LlamaRMSNorm.
class LlamaRMSNorm : public Module {
 public:
  LlamaRMSNorm(int64_t hidden_size, double eps);
  Tensor forward(const Tensor& x) override;
  std::string extra_repr() const override;

  double eps;
  Tensor weight;  // [hidden_size], ones at initialisation
};

class LlamaAttention : public Module {
 public:
  using Module::forward;
  explicit LlamaAttention(const LlamaConfig& config, int64_t layer_idx = 0);
  // hidden [B, S, E]; additive_mask [B or 1, 1, S, S]; cos, sin [S, head_size]
  // (the rows of the tokens' positions). With a cache of T positions the mask
  // is [1, 1, S, T + S] and the cache's layer_idx slot gains this step's
  // rotated keys and values.
  Tensor forward(const Tensor& hidden, const Tensor& additive_mask, const Tensor& cos, const Tensor& sin,
                 KVCache* cache = nullptr);

  int64_t num_heads, num_kv_heads, head_size, layer_idx;
  double dropout_p;
  std::shared_ptr<Linear> q_proj, k_proj, v_proj, o_proj;
};

class LlamaMLP : public Module {
 public:
  explicit LlamaMLP(const LlamaConfig& config);
  Tensor forward(const Tensor& x) override;

  std::shared_ptr<Linear> gate_proj, up_proj, down_proj;
};

// x + attn(input_layernorm(x)), then x + mlp(post_attention_layernorm(x)).
class LlamaDecoderLayer : public Module {
 public:
  using Module::forward;
  explicit LlamaDecoderLayer(const LlamaConfig& config, int64_t layer_idx = 0);
  Tensor forward(const Tensor& hidden, const Tensor& additive_mask, const Tensor& cos, const Tensor& sin,
                 KVCache* cache = nullptr);

  std::shared_ptr<LlamaRMSNorm> input_layernorm, post_attention_layernorm;
  std::shared_ptr<LlamaAttention> self_attn;
  std::shared_ptr<LlamaMLP> mlp;
};

class LlamaModel : public Module {
 public:
  using Module::forward;
  explicit LlamaModel(const LlamaConfig& config);
  // input_ids [B, S]; attention_mask [B, S] or undefined -> hidden states [B, S, E] after norm.
  // With a cache (and no attention_mask) the ids are the positions after
  // the cached ones (CausalLM::forward_cached).
  Tensor forward(const Tensor& input_ids, const Tensor& attention_mask, KVCache* cache = nullptr);

  std::shared_ptr<Embedding> embed_tokens;
  std::shared_ptr<ModuleList> layers;  // of LlamaDecoderLayer
  std::shared_ptr<LlamaRMSNorm> norm;
  std::vector<double> inv_freq;  // the rotary frequencies (llama_inverse_frequencies)
  bool gradient_checkpointing = false;

 protected:
  bool set_gradient_checkpointing(bool on) override {
    gradient_checkpointing = on;
    return true;
  }

 private:
  // The rotary tables of the longest sequence seen, kept while dtype and
  // device repeat (a position's row does not depend on the table's length).
  struct RotaryCache {
    int64_t seq_len = -1;
    DType dtype = DType::float32;
    Device device;
    Tensor cos, sin;
  } rotary_;
};

class LlamaForCausalLM : public CausalLM {
 public:
  using CausalLM::forward;
  // A freshly initialised model (transformers' _init_weights, from the global
  // generator). ValueError when the config does not validate.
  explicit LlamaForCausalLM(LlamaConfig config);

  CausalLMOutput forward(const Tensor& input_ids, const Tensor& attention_mask, const Tensor& labels) override;
  Tensor forward_cached(const Tensor& input_ids, KVCache& cache) override;

  // Loads a model folder: names with or without "model.", lm_head.weight
  // required unless tied (then ignored when present), stale rotary buffers
  // ignored; anything missing, misshapen or unknown is an error naming the
  // file and the keys.
  static std::shared_ptr<LlamaForCausalLM> from_pretrained(const std::string& model_dir);
  // config.json (architectures: config.architecture()) and model.safetensors.
  void save_pretrained(const std::string& dir) const override;

  std::string model_type() const override { return config.model_type; }
  int64_t vocab_size() const override { return config.vocab_size; }
  int64_t max_sequence_length() const override { return config.max_sequence_length(); }
  // The output projection [vocab, E]: embed_tokens' weight when tied.
  Tensor output_weight() const;

  LlamaConfig config;
  std::shared_ptr<LlamaModel> model;
  std::shared_ptr<Linear> lm_head;  // null when tied to model.embed_tokens
};

// transformers' initialisation of a Llama tree: Linear and Embedding weights
// ~ N(0, initializer_range), biases 0, the padding row 0, RMSNorm weights 1.
void init_llama_weights(Module& root, double initializer_range);

}  // namespace hearth::nn::models
