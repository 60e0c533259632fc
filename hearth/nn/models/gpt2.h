// GPT-2 (Radford et al. 2019) as Hugging Face's transformers builds it:
// GPT2Model (the decoder stack) and GPT2LMHeadModel (its output layer tied to
// the token embeddings), with their parameter names and shapes:
//
//   transformer.wte, transformer.wpe                       token and position embeddings
//   transformer.h.<i>.ln_1, .attn.c_attn, .attn.c_proj     pre-LayerNorm attention (c_attn: q, k, v fused)
//   transformer.h.<i>.ln_2, .mlp.c_fc, .mlp.c_proj         pre-LayerNorm MLP
//   transformer.ln_f
//   lm_head.weight                                         only when tie_word_embeddings is false
//
// The projections are GPT-2's Conv1D: weight [in, out] (transposed against a
// Linear's), as the checkpoints store them.
//
//   auto model = GPT2LMHeadModel::from_pretrained("models/gpt2");
//   auto out = model->forward(input_ids, attention_mask, labels);
#pragma once

#include <memory>

#include "hearth/nn/container.h"
#include "hearth/nn/dropout.h"
#include "hearth/nn/embedding.h"
#include "hearth/nn/layer_norm.h"
#include "hearth/nn/linear.h"
#include "hearth/nn/lora_layer.h"
#include "hearth/nn/models/causal_lm.h"
#include "hearth/nn/models/gpt2_config.h"

namespace hearth::nn::models {

// y = x @ weight + bias with weight [in_features, out_features]. Takes a
// LoRA adapter as PEFT adapts Conv1D (fan_in_fan_out): lora_A [r, in] and
// lora_B [out, r] as for a Linear, merged as (B A)^T into the weight.
class GPT2Conv1D : public Module, public LoraLayer {
 public:
  GPT2Conv1D(int64_t in_features, int64_t out_features);
  Tensor forward(const Tensor& x) override;
  std::string extra_repr() const override;

  void add_lora(int64_t r, double scaling, double dropout) override;
  void remove_lora() override;
  bool lora_fan_in_fan_out() const override { return true; }

  int64_t in_features, out_features;
  Tensor weight, bias;

 protected:
  Tensor& lora_base_weight() override { return weight; }
};

// Causal multi-head self-attention through scaled_dot_product_attention.
class GPT2Attention : public Module {
 public:
  using Module::forward;
  GPT2Attention(const GPT2Config& config, int64_t layer_idx);
  // hidden [B, S, E]; additive_mask [B or 1, 1, S, S] (causal_attention_mask),
  // or [1, 1, S, T + S] with a cache of T positions, whose layer_idx slot
  // gains this step's keys and values.
  Tensor forward(const Tensor& hidden, const Tensor& additive_mask, KVCache* cache = nullptr);

  int64_t num_heads, head_size, layer_idx;
  double scale;
  std::shared_ptr<GPT2Conv1D> c_attn, c_proj;
  std::shared_ptr<Dropout> attn_dropout, resid_dropout;
};

class GPT2MLP : public Module {
 public:
  explicit GPT2MLP(const GPT2Config& config);
  Tensor forward(const Tensor& hidden) override;

  std::string activation;
  std::shared_ptr<GPT2Conv1D> c_fc, c_proj;
  std::shared_ptr<Dropout> dropout;
};

// x + attn(ln_1(x)), then x + mlp(ln_2(x)).
class GPT2Block : public Module {
 public:
  using Module::forward;
  GPT2Block(const GPT2Config& config, int64_t layer_idx);
  Tensor forward(const Tensor& hidden, const Tensor& additive_mask, KVCache* cache = nullptr);

  std::shared_ptr<nn::LayerNorm> ln_1, ln_2;
  std::shared_ptr<GPT2Attention> attn;
  std::shared_ptr<GPT2MLP> mlp;
};

class GPT2Model : public Module {
 public:
  using Module::forward;
  explicit GPT2Model(const GPT2Config& config);
  // input_ids [B, S]; attention_mask [B, S] or undefined -> hidden states [B, S, E] after ln_f.
  // With a cache (and no attention_mask) the ids are the positions after
  // the cached ones (CausalLM::forward_cached).
  Tensor forward(const Tensor& input_ids, const Tensor& attention_mask, KVCache* cache = nullptr);

  std::shared_ptr<Embedding> wte, wpe;
  std::shared_ptr<Dropout> drop;
  std::shared_ptr<ModuleList> h;  // of GPT2Block
  std::shared_ptr<nn::LayerNorm> ln_f;
  bool gradient_checkpointing = false;

 protected:
  bool set_gradient_checkpointing(bool on) override {
    gradient_checkpointing = on;
    return true;
  }
};

class GPT2LMHeadModel : public CausalLM {
 public:
  using CausalLM::forward;
  // A freshly initialised model (transformers' _init_weights, from the global
  // generator). ValueError when the config does not validate.
  explicit GPT2LMHeadModel(GPT2Config config);

  CausalLMOutput forward(const Tensor& input_ids, const Tensor& attention_mask, const Tensor& labels) override;
  Tensor forward_cached(const Tensor& input_ids, KVCache& cache) override;

  // Loads a model folder: names with or without "transformer.", the
  // attention's mask buffers (attn.bias, attn.masked_bias) ignored, every
  // weight present with its shape; anything missing, misshapen or unknown is
  // an error naming the file and the keys.
  static std::shared_ptr<GPT2LMHeadModel> from_pretrained(const std::string& model_dir);
  // config.json (architectures ["GPT2LMHeadModel"]) and model.safetensors.
  void save_pretrained(const std::string& dir) const override;

  std::string model_type() const override { return "gpt2"; }
  int64_t vocab_size() const override { return config.vocab_size; }
  int64_t max_sequence_length() const override { return config.n_positions; }
  // The output projection [vocab, E]: wte's weight when tied.
  Tensor output_weight() const;

  GPT2Config config;
  std::shared_ptr<GPT2Model> transformer;
  std::shared_ptr<Linear> lm_head;  // null when tied to transformer.wte
};

// transformers' initialisation of a GPT-2 tree: Conv1D/Linear/Embedding
// weights ~ N(0, initializer_range), biases 0, LayerNorm 1 and 0, and every
// c_proj weight ~ N(0, initializer_range / sqrt(2 n_layer)).
void init_gpt2_weights(Module& root, const GPT2Config& config);

}  // namespace hearth::nn::models
