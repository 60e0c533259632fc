// Causal language models (GPT-2, Llama and its relatives) behind one
// interface, as Hugging Face's *ForCausalLM classes behave:
//
//   auto model = load_causal_lm("models/TinyLlama-1.1B");        // config.json picks the architecture
//   auto out = model->forward(input_ids, attention_mask, labels); // out.logits [B, S, V], out.loss
//   out.loss.backward();
//   model->save_pretrained("runs/clm/final");                     // loads back in transformers
//
// Inputs: input_ids [B, S] int64 (int32 accepted); attention_mask [B, S] of 1
// for tokens and 0 for padding, any dtype, or undefined (every token
// attends); labels [B, S] int64 token ids, -100 where no loss is wanted, or
// undefined. Attention is causal: position t sees positions <= t.
//
// The loss is transformers': the labels are shifted inside the model (the
// logits at t predict the label at t + 1), cross entropy over the vocabulary
// ignoring -100, the mean over the tokens not ignored.
#pragma once

#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "hearth/nn/module.h"

namespace hearth::nn::models {

// The keys and values of the positions a model has already read, one pair per
// layer, for incremental decoding (transformers' DynamicCache): a forward
// with a cache reads only the new tokens, attends them over the cached ones
// and appends their keys and values.
struct KVCache {
  struct Layer {
    Tensor key, value;  // [B, kv_heads, T, head_size]; undefined before the first step
  };
  std::vector<Layer> layers;

  // T: the positions cached so far (0 for a new cache).
  int64_t length() const { return layers.empty() || !layers[0].key.defined() ? 0 : layers[0].key.size(2); }
  // Appends a layer's new keys and values [B, kv_heads, S, head_size] and
  // returns all of them, [B, kv_heads, T + S, head_size].
  std::pair<Tensor, Tensor> append(size_t layer, const Tensor& key, const Tensor& value);
  void clear() { layers.clear(); }
};

struct CausalLMOutput {
  Tensor loss;    // 0-d; undefined when no labels were given
  Tensor logits;  // [B, S, vocab_size]
};

class CausalLM : public Module {
 public:
  using Module::forward;
  // input_ids alone: logits for every position, no padding.
  Tensor forward(const Tensor& input_ids) override { return forward(input_ids, Tensor(), Tensor()).logits; }
  virtual CausalLMOutput forward(const Tensor& input_ids, const Tensor& attention_mask, const Tensor& labels) = 0;
  // Incremental forward for decoding: input_ids [B, S] are the tokens at
  // positions T .. T + S - 1 after the cache's T; returns their logits
  // [B, S, V], equal to the last S positions of a full forward over all
  // T + S tokens, and extends the cache. No padding: every cached token is
  // attended.
  virtual Tensor forward_cached(const Tensor& input_ids, KVCache& cache) = 0;

  // config.json and model.safetensors with Hugging Face's names and shapes
  // (a tied output layer is not written: transformers ties it on load).
  virtual void save_pretrained(const std::string& dir) const = 0;
  // config.json's model_type: "gpt2", "llama", "mistral", "qwen2".
  virtual std::string model_type() const = 0;
  virtual int64_t vocab_size() const = 0;
  // The longest sequence forward takes (n_positions, max_position_embeddings).
  virtual int64_t max_sequence_length() const = 0;

 protected:
  explicit CausalLM(std::string type_name) : Module(std::move(type_name)) {}
};

// The model_types load_causal_lm and causal_lm_from_config build.
const std::vector<std::string>& causal_lm_model_types();
// A model folder (config.json + model.safetensors or its shards), the
// architecture chosen by config.json's model_type; ValueError naming the
// supported ones for any other.
std::shared_ptr<CausalLM> load_causal_lm(const std::string& model_dir);
// A freshly initialised model (transformers' initialisation, drawn from the
// global generator) from a config.json file, or from a folder holding one.
std::shared_ptr<CausalLM> causal_lm_from_config(const std::string& config_path_or_dir);

// ---- shared by the architectures ----

// The additive mask attention adds to its scores: 0 where query position l
// may attend key s (s <= l and s not padding), the dtype's lowest value
// elsewhere. [1, 1, S, S] without a padding mask, [B, 1, S, S] with one.
// attention_mask: undefined, or [B, S] of 1 (token) and 0 (padding).
Tensor causal_attention_mask(const Tensor& attention_mask, int64_t batch, int64_t seq_len, DType dtype, Device device,
                             const char* tag);

// The additive mask of `seq_len` new queries at positions past_length ..
// past_length + seq_len - 1 over every key up to theirs: [1, 1, S, T + S].
Tensor cached_causal_attention_mask(int64_t past_length, int64_t seq_len, DType dtype, Device device, const char* tag);

// transformers' causal-LM loss (see above) of logits [B, S, V] and labels
// [B, S]; half-precision logits are widened to float32 first, as transformers
// does.
Tensor causal_lm_loss(const Tensor& logits, const Tensor& labels, const char* tag);

// Checks input_ids [B, S] of an integer dtype, 1 <= S <= max_len, and the
// shapes of attention_mask and labels when defined.
void check_causal_lm_inputs(const Tensor& input_ids, const Tensor& attention_mask, const Tensor& labels,
                            int64_t max_len, const char* max_len_field, const char* tag);

// Refuses (OutOfMemoryError) a model of `parameters` float32 parameters that
// would not fit in this machine's memory, before anything is allocated.
void check_parameters_fit_in_memory(double parameters, const std::string& what, const char* tag);

}  // namespace hearth::nn::models
