#include "hearth/nn/models/gpt2.h"

#include <cmath>
#include <tuple>

#include "hearth/autograd/checkpoint.h"
#include "hearth/autograd/grad_mode.h"
#include "hearth/nn/init.h"
#include "hearth/ops/attention.h"
#include "hearth/ops/elementwise.h"
#include "hearth/ops/factory.h"
#include "hearth/ops/linalg.h"
#include "hearth/ops/view.h"

namespace hearth::nn::models {
namespace {

constexpr const char* kTag = "GPT2LMHeadModel";

std::string describe(const Tensor& t) {
  return t.defined() ? t.shape_string() + " " + dtype_name(t.dtype()) : std::string("undefined");
}

const GPT2Config& validated(const GPT2Config& config) {
  config.validate(std::string(kTag) + " config");
  check_parameters_fit_in_memory(config.parameter_count(),
                                 "vocab_size " + std::to_string(config.vocab_size) + ", n_embd " +
                                     std::to_string(config.n_embd) + ", n_layer " + std::to_string(config.n_layer) +
                                     ", n_inner " + std::to_string(config.inner_size()),
                                 kTag);
  return config;
}

Tensor activate(const Tensor& x, const std::string& name) {
  if (name == "gelu_new" || name == "gelu_pytorch_tanh") return gelu(x, "tanh");
  if (name == "gelu") return gelu(x, "none");
  if (name == "relu") return relu(x);
  if (name == "silu" || name == "swish") return silu(x);
  if (name == "tanh") return tanh(x);
  HEARTH_THROW(ValueError, "[GPT2MLP] unknown activation_function \"", name, "\"");
}

bool ends_with(const std::string& s, const std::string& suffix) {
  return s.size() >= suffix.size() && s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

}  // namespace

// ---- Conv1D ----

GPT2Conv1D::GPT2Conv1D(int64_t in, int64_t out) : Module("Conv1D"), in_features(in), out_features(out) {
  weight = register_parameter("weight", empty({in, out}));
  bias = register_parameter("bias", zeros({out}));
  init::normal_(weight, 0.0, 0.02);  // transformers' Conv1D default
}

Tensor GPT2Conv1D::forward(const Tensor& x) {
  HEARTH_CHECK(x.defined() && x.dim() >= 1 && x.size(-1) == in_features, ShapeError,
               "[Conv1D] expected an input whose last dim is ", in_features, ", got ", describe(x));
  // A transposed view: linear's product reads it without a copy.
  return add_lora_output(x, linear(x, transpose(weight, 0, 1), bias), is_training());
}

void GPT2Conv1D::add_lora(int64_t r, double scaling, double dropout) {
  attach_lora(*this, weight, in_features, out_features, r, scaling, dropout);
}

void GPT2Conv1D::remove_lora() {
  if (!lora_A) return;
  remove_child("lora_A");
  remove_child("lora_B");
  lora_A.reset();
  lora_B.reset();
}

std::string GPT2Conv1D::extra_repr() const {
  return "nf=" + std::to_string(out_features) + ", nx=" + std::to_string(in_features);
}

// ---- attention, MLP, block ----

GPT2Attention::GPT2Attention(const GPT2Config& c, int64_t layer_idx)
    : Module("GPT2Attention"), num_heads(c.n_head), head_size(c.head_size()), layer_idx(layer_idx) {
  scale = c.scale_attn_weights ? 1.0 / std::sqrt(static_cast<double>(head_size)) : 1.0;
  if (c.scale_attn_by_inverse_layer_idx) scale /= static_cast<double>(layer_idx + 1);
  c_attn = register_module("c_attn", std::make_shared<GPT2Conv1D>(c.n_embd, 3 * c.n_embd));
  c_proj = register_module("c_proj", std::make_shared<GPT2Conv1D>(c.n_embd, c.n_embd));
  attn_dropout = register_module("attn_dropout", std::make_shared<Dropout>(c.attn_pdrop));
  resid_dropout = register_module("resid_dropout", std::make_shared<Dropout>(c.resid_pdrop));
}

Tensor GPT2Attention::forward(const Tensor& hidden, const Tensor& additive_mask, KVCache* cache) {
  const int64_t embd = num_heads * head_size;
  HEARTH_CHECK(hidden.defined() && hidden.dim() == 3 && hidden.size(2) == embd, ShapeError,
               "[GPT2Attention] expected hidden states [batch, seq_len, ", embd, "], got ", describe(hidden));
  const int64_t batch = hidden.size(0), seq_len = hidden.size(1);
  const Tensor qkv = c_attn->forward(hidden);  // [B, S, 3E]: q, k, v side by side
  // [B, S, E] slice -> [B, heads, S, head_size]
  auto head_view = [&](int64_t part) {
    return permute(view(narrow(qkv, 2, part * embd, embd), {batch, seq_len, num_heads, head_size}), {0, 2, 1, 3});
  };
  Tensor key = head_view(1), value = head_view(2);
  if (cache) std::tie(key, value) = cache->append(static_cast<size_t>(layer_idx), key, value);
  Tensor context =
      scaled_dot_product_attention(head_view(0), key, value, additive_mask, attn_dropout->p, is_training(), scale);
  context = reshape(permute(context, {0, 2, 1, 3}), {batch, seq_len, embd});
  return resid_dropout->forward(c_proj->forward(context));
}

GPT2MLP::GPT2MLP(const GPT2Config& c) : Module("GPT2MLP"), activation(c.activation_function) {
  c_fc = register_module("c_fc", std::make_shared<GPT2Conv1D>(c.n_embd, c.inner_size()));
  c_proj = register_module("c_proj", std::make_shared<GPT2Conv1D>(c.inner_size(), c.n_embd));
  dropout = register_module("dropout", std::make_shared<Dropout>(c.resid_pdrop));
}

Tensor GPT2MLP::forward(const Tensor& hidden) {
  return dropout->forward(c_proj->forward(activate(c_fc->forward(hidden), activation)));
}

GPT2Block::GPT2Block(const GPT2Config& c, int64_t layer_idx) : Module("GPT2Block") {
  ln_1 = register_module("ln_1", std::make_shared<nn::LayerNorm>(c.n_embd, c.layer_norm_epsilon));
  attn = register_module("attn", std::make_shared<GPT2Attention>(c, layer_idx));
  ln_2 = register_module("ln_2", std::make_shared<nn::LayerNorm>(c.n_embd, c.layer_norm_epsilon));
  mlp = register_module("mlp", std::make_shared<GPT2MLP>(c));
}

Tensor GPT2Block::forward(const Tensor& hidden, const Tensor& additive_mask, KVCache* cache) {
  Tensor x = add(hidden, attn->forward(ln_1->forward(hidden), additive_mask, cache));
  return add(x, mlp->forward(ln_2->forward(x)));
}

// ---- the decoder stack ----

GPT2Model::GPT2Model(const GPT2Config& c) : Module("GPT2Model") {
  wte = register_module("wte", std::make_shared<Embedding>(c.vocab_size, c.n_embd));
  wpe = register_module("wpe", std::make_shared<Embedding>(c.n_positions, c.n_embd));
  drop = register_module("drop", std::make_shared<Dropout>(c.embd_pdrop));
  h = register_module("h", std::make_shared<ModuleList>());
  for (int64_t i = 0; i < c.n_layer; ++i) h->push_back(std::make_shared<GPT2Block>(c, i));
  ln_f = register_module("ln_f", std::make_shared<nn::LayerNorm>(c.n_embd, c.layer_norm_epsilon));
}

Tensor GPT2Model::forward(const Tensor& input_ids, const Tensor& attention_mask, KVCache* cache) {
  const int64_t past = cache ? cache->length() : 0;
  check_causal_lm_inputs(input_ids, attention_mask, Tensor(), wpe->num_embeddings - past,
                         past > 0 ? "n_positions less the cached positions" : "n_positions", "GPT2Model");
  HEARTH_CHECK(!cache || !attention_mask.defined(), ValueError,
               "[GPT2Model] a forward with a key/value cache takes no attention_mask (every token is attended)");
  const int64_t batch = input_ids.size(0), seq_len = input_ids.size(1);
  // Learned positions: the new tokens continue after the cached ones.
  const Tensor positions = arange(past, past + seq_len, 1, DType::int64, input_ids.device());
  Tensor x = drop->forward(add(wte->forward(input_ids), wpe->forward(positions)));
  const Tensor mask = cache ? cached_causal_attention_mask(past, seq_len, x.dtype(), x.device(), "GPT2Model")
                            : causal_attention_mask(attention_mask, batch, seq_len, x.dtype(), x.device(), "GPT2Model");
  const bool checkpointed = gradient_checkpointing && is_training() && grad_enabled() && !cache;
  for (const auto& module : *h) {
    auto block = std::static_pointer_cast<GPT2Block>(module);
    if (!checkpointed) {
      x = block->forward(x, mask, cache);
      continue;
    }
    x = autograd::checkpoint(
        [block, mask](const std::vector<Tensor>& in) { return std::vector<Tensor>{block->forward(in[0], mask)}; },
        {x})[0];
  }
  return ln_f->forward(x);
}

// ---- the language model ----

GPT2LMHeadModel::GPT2LMHeadModel(GPT2Config c) : CausalLM("GPT2LMHeadModel"), config(validated(c)) {
  {
    // The layers' own draws would all be replaced below.
    nn::init::SkipInitGuard replaced_by_init_gpt2_weights;
    transformer = register_module("transformer", std::make_shared<GPT2Model>(config));
    if (!config.tie_word_embeddings)
      lm_head = register_module("lm_head", std::make_shared<Linear>(config.n_embd, config.vocab_size, false));
  }
  init_gpt2_weights(*this, config);
}

Tensor GPT2LMHeadModel::output_weight() const { return lm_head ? lm_head->weight : transformer->wte->weight; }

CausalLMOutput GPT2LMHeadModel::forward(const Tensor& input_ids, const Tensor& attention_mask, const Tensor& labels) {
  check_causal_lm_inputs(input_ids, attention_mask, labels, config.n_positions, "n_positions", kTag);
  CausalLMOutput out;
  out.logits = linear(transformer->forward(input_ids, attention_mask), output_weight());
  if (labels.defined()) out.loss = causal_lm_loss(out.logits, labels, kTag);
  return out;
}

Tensor GPT2LMHeadModel::forward_cached(const Tensor& input_ids, KVCache& cache) {
  return linear(transformer->forward(input_ids, Tensor(), &cache), output_weight());
}

void init_gpt2_weights(Module& root, const GPT2Config& config) {
  NoGradGuard no_grad;
  const double std = config.initializer_range;
  root.apply([&](Module& m) {
    if (auto* conv = dynamic_cast<GPT2Conv1D*>(&m)) {
      init::normal_(conv->weight, 0.0, std);
      init::zeros_(conv->bias);
    } else if (auto* linear = dynamic_cast<Linear*>(&m)) {
      init::normal_(linear->weight, 0.0, std);
      if (linear->bias.defined()) init::zeros_(linear->bias);
    } else if (auto* embedding = dynamic_cast<Embedding*>(&m)) {
      init::normal_(embedding->weight, 0.0, std);
    } else if (auto* norm = dynamic_cast<nn::LayerNorm*>(&m)) {
      if (norm->weight.defined()) init::ones_(norm->weight);
      if (norm->bias.defined()) init::zeros_(norm->bias);
    }
  });
  // GPT-2's scaling of the residual projections: each block adds two of them
  // to the residual stream, so their variance shrinks with depth.
  const double residual_std = std / std::sqrt(2.0 * static_cast<double>(std::max<int64_t>(config.n_layer, 1)));
  for (const auto& [name, p] : root.named_parameters())
    if (ends_with(name, "c_proj.weight")) init::normal_(p, 0.0, residual_std);
}

}  // namespace hearth::nn::models
