#include "hearth/nn/models/llama.h"

#include <cmath>
#include <limits>
#include <sstream>
#include <tuple>

#include "hearth/autograd/checkpoint.h"
#include "hearth/autograd/grad_mode.h"
#include "hearth/nn/init.h"
#include "hearth/nn/models/llama_rope.h"
#include "hearth/ops/attention.h"
#include "hearth/ops/elementwise.h"
#include "hearth/ops/factory.h"
#include "hearth/ops/linalg.h"
#include "hearth/ops/reduction.h"
#include "hearth/ops/view.h"

namespace hearth::nn::models {
namespace {

std::string describe(const Tensor& t) {
  return t.defined() ? t.shape_string() + " " + dtype_name(t.dtype()) : std::string("undefined");
}

const LlamaConfig& validated(const LlamaConfig& config, const std::string& model) {
  config.validate(model + " config");
  check_parameters_fit_in_memory(config.parameter_count(),
                                 "vocab_size " + std::to_string(config.vocab_size) + ", hidden_size " +
                                     std::to_string(config.hidden_size) + ", intermediate_size " +
                                     std::to_string(config.intermediate_size) + ", num_hidden_layers " +
                                     std::to_string(config.num_hidden_layers),
                                 model.c_str());
  return config;
}

// [B, kv_heads, S, D] -> [B, kv_heads * groups, S, D], each key/value head
// repeated for the `groups` query heads that share it (head h reads kv head
// h / groups).
Tensor repeat_kv(const Tensor& x, int64_t groups) {
  if (groups == 1) return x;
  const int64_t b = x.size(0), kv = x.size(1), s = x.size(2), d = x.size(3);
  return reshape(expand(unsqueeze(x, 2), {b, kv, groups, s, d}), {b, kv * groups, s, d});
}

}  // namespace

// ---- RMSNorm ----

LlamaRMSNorm::LlamaRMSNorm(int64_t hidden_size, double eps) : Module("LlamaRMSNorm"), eps(eps) {
  weight = register_parameter("weight", ones({hidden_size}));
}

Tensor LlamaRMSNorm::forward(const Tensor& x) {
  HEARTH_CHECK(x.defined() && x.dim() >= 1 && x.size(x.dim() - 1) == weight.size(0), ShapeError,
               "[LlamaRMSNorm] expected an input whose last dim is ", weight.size(0), ", got ", describe(x));
  const DType in = x.dtype();
  const DType compute = in == DType::float64 ? DType::float64 : DType::float32;
  const Tensor wide = in == compute ? x : cast(x, compute);
  const Tensor mean_square = mean(square(wide), {wide.dim() - 1}, /*keepdim=*/true);
  Tensor normed = mul(wide, rsqrt(add(mean_square, eps)));
  if (in != compute) normed = cast(normed, in);
  return mul(weight, normed);
}

std::string LlamaRMSNorm::extra_repr() const {
  std::ostringstream os;
  os << "(" << weight.size(0) << ",), eps=" << eps;
  return os.str();
}

// ---- attention, MLP, layer ----

LlamaAttention::LlamaAttention(const LlamaConfig& c, int64_t layer_idx)
    : Module("LlamaAttention"),
      num_heads(c.num_attention_heads),
      num_kv_heads(c.kv_heads()),
      head_size(c.head_size()),
      layer_idx(layer_idx),
      dropout_p(c.attention_dropout) {
  q_proj = register_module("q_proj", std::make_shared<Linear>(c.hidden_size, num_heads * head_size, c.qkv_bias()));
  k_proj = register_module("k_proj", std::make_shared<Linear>(c.hidden_size, num_kv_heads * head_size, c.qkv_bias()));
  v_proj = register_module("v_proj", std::make_shared<Linear>(c.hidden_size, num_kv_heads * head_size, c.qkv_bias()));
  o_proj = register_module("o_proj", std::make_shared<Linear>(num_heads * head_size, c.hidden_size, c.o_bias()));
}

Tensor LlamaAttention::forward(const Tensor& hidden, const Tensor& additive_mask, const Tensor& cos, const Tensor& sin,
                               KVCache* cache) {
  HEARTH_CHECK(hidden.defined() && hidden.dim() == 3 && hidden.size(2) == q_proj->in_features, ShapeError,
               "[LlamaAttention] expected hidden states [batch, seq_len, ", q_proj->in_features, "], got ",
               describe(hidden));
  const int64_t batch = hidden.size(0), seq_len = hidden.size(1);
  // [B, S, heads * D] -> [B, heads, S, D]
  auto split_heads = [&](const Tensor& x, int64_t heads) {
    return permute(view(x, {batch, seq_len, heads, head_size}), {0, 2, 1, 3});
  };
  const Tensor q = apply_rotary(split_heads(q_proj->forward(hidden), num_heads), cos, sin);
  Tensor k = apply_rotary(split_heads(k_proj->forward(hidden), num_kv_heads), cos, sin);
  Tensor v = split_heads(v_proj->forward(hidden), num_kv_heads);
  // Cached keys are stored rotated: their positions never change.
  if (cache) std::tie(k, v) = cache->append(static_cast<size_t>(layer_idx), k, v);
  const int64_t groups = num_heads / num_kv_heads;
  Tensor context = scaled_dot_product_attention(q, repeat_kv(k, groups), repeat_kv(v, groups), additive_mask, dropout_p,
                                                is_training(), 1.0 / std::sqrt(static_cast<double>(head_size)));
  context = reshape(permute(context, {0, 2, 1, 3}), {batch, seq_len, num_heads * head_size});
  return o_proj->forward(context);
}

LlamaMLP::LlamaMLP(const LlamaConfig& c) : Module("LlamaMLP") {
  gate_proj = register_module("gate_proj", std::make_shared<Linear>(c.hidden_size, c.intermediate_size, c.mlp_bias));
  up_proj = register_module("up_proj", std::make_shared<Linear>(c.hidden_size, c.intermediate_size, c.mlp_bias));
  down_proj = register_module("down_proj", std::make_shared<Linear>(c.intermediate_size, c.hidden_size, c.mlp_bias));
}

Tensor LlamaMLP::forward(const Tensor& x) {
  return down_proj->forward(mul(silu(gate_proj->forward(x)), up_proj->forward(x)));
}

LlamaDecoderLayer::LlamaDecoderLayer(const LlamaConfig& c, int64_t layer_idx) : Module("LlamaDecoderLayer") {
  self_attn = register_module("self_attn", std::make_shared<LlamaAttention>(c, layer_idx));
  mlp = register_module("mlp", std::make_shared<LlamaMLP>(c));
  input_layernorm = register_module("input_layernorm", std::make_shared<LlamaRMSNorm>(c.hidden_size, c.rms_norm_eps));
  post_attention_layernorm =
      register_module("post_attention_layernorm", std::make_shared<LlamaRMSNorm>(c.hidden_size, c.rms_norm_eps));
}

Tensor LlamaDecoderLayer::forward(const Tensor& hidden, const Tensor& additive_mask, const Tensor& cos,
                                  const Tensor& sin, KVCache* cache) {
  Tensor x = add(hidden, self_attn->forward(input_layernorm->forward(hidden), additive_mask, cos, sin, cache));
  return add(x, mlp->forward(post_attention_layernorm->forward(x)));
}

// ---- the decoder stack ----

LlamaModel::LlamaModel(const LlamaConfig& c) : Module("LlamaModel"), inv_freq(llama_inverse_frequencies(c)) {
  embed_tokens =
      register_module("embed_tokens", std::make_shared<Embedding>(c.vocab_size, c.hidden_size, c.pad_token_id));
  layers = register_module("layers", std::make_shared<ModuleList>());
  for (int64_t i = 0; i < c.num_hidden_layers; ++i) layers->push_back(std::make_shared<LlamaDecoderLayer>(c, i));
  norm = register_module("norm", std::make_shared<LlamaRMSNorm>(c.hidden_size, c.rms_norm_eps));
}

Tensor LlamaModel::forward(const Tensor& input_ids, const Tensor& attention_mask, KVCache* cache) {
  check_causal_lm_inputs(input_ids, attention_mask, Tensor(), std::numeric_limits<int64_t>::max(),
                         "max_position_embeddings", "LlamaModel");
  HEARTH_CHECK(!cache || !attention_mask.defined(), ValueError,
               "[LlamaModel] a forward with a key/value cache takes no attention_mask (every token is attended)");
  const int64_t batch = input_ids.size(0), seq_len = input_ids.size(1);
  const int64_t past = cache ? cache->length() : 0, end = past + seq_len;
  Tensor x = embed_tokens->forward(input_ids);
  const Tensor mask = cache
                          ? cached_causal_attention_mask(past, seq_len, x.dtype(), x.device(), "LlamaModel")
                          : causal_attention_mask(attention_mask, batch, seq_len, x.dtype(), x.device(), "LlamaModel");
  if (rotary_.seq_len < end || rotary_.dtype != x.dtype() || !(rotary_.device == x.device())) {
    auto [cos, sin] = rotary_cos_sin(inv_freq, end, x.dtype(), x.device());
    rotary_ = {end, x.dtype(), x.device(), cos, sin};
  }
  // The rows of positions past .. end - 1.
  const Tensor cos = rotary_.seq_len == seq_len ? rotary_.cos : narrow(rotary_.cos, 0, past, seq_len);
  const Tensor sin = rotary_.seq_len == seq_len ? rotary_.sin : narrow(rotary_.sin, 0, past, seq_len);
  const bool checkpointed = gradient_checkpointing && is_training() && grad_enabled() && !cache;
  for (const auto& module : *layers) {
    auto layer = std::static_pointer_cast<LlamaDecoderLayer>(module);
    if (!checkpointed) {
      x = layer->forward(x, mask, cos, sin, cache);
      continue;
    }
    x = autograd::checkpoint(
        [layer, mask, cos, sin](const std::vector<Tensor>& in) {
          return std::vector<Tensor>{layer->forward(in[0], mask, cos, sin)};
        },
        {x})[0];
  }
  return norm->forward(x);
}

// ---- the language model ----

LlamaForCausalLM::LlamaForCausalLM(LlamaConfig c) : CausalLM(c.architecture()), config(validated(c, c.architecture())) {
  {
    // The layers' own draws would all be replaced below.
    nn::init::SkipInitGuard replaced_by_init_llama_weights;
    model = register_module("model", std::make_shared<LlamaModel>(config));
    if (!config.tie_word_embeddings)
      lm_head = register_module("lm_head", std::make_shared<Linear>(config.hidden_size, config.vocab_size, false));
  }
  init_llama_weights(*this, config.initializer_range);
}

Tensor LlamaForCausalLM::output_weight() const { return lm_head ? lm_head->weight : model->embed_tokens->weight; }

CausalLMOutput LlamaForCausalLM::forward(const Tensor& input_ids, const Tensor& attention_mask, const Tensor& labels) {
  const std::string tag = type_name();
  const bool windowed = config.max_sequence_length() < config.max_position_embeddings;
  check_causal_lm_inputs(
      input_ids, attention_mask, labels, config.max_sequence_length(),
      windowed ? "sliding_window (longer sequences would need sliding-window attention)" : "max_position_embeddings",
      tag.c_str());
  CausalLMOutput out;
  out.logits = linear(model->forward(input_ids, attention_mask), output_weight());
  if (labels.defined()) out.loss = causal_lm_loss(out.logits, labels, tag.c_str());
  return out;
}

Tensor LlamaForCausalLM::forward_cached(const Tensor& input_ids, KVCache& cache) {
  const std::string tag = type_name();
  const int64_t past = cache.length();
  const bool windowed = config.max_sequence_length() < config.max_position_embeddings;
  check_causal_lm_inputs(input_ids, Tensor(), Tensor(), config.max_sequence_length() - past,
                         windowed ? "sliding_window less the cached positions (longer sequences would need "
                                    "sliding-window attention)"
                                  : "max_position_embeddings less the cached positions",
                         tag.c_str());
  return linear(model->forward(input_ids, Tensor(), &cache), output_weight());
}

void init_llama_weights(Module& root, double initializer_range) {
  NoGradGuard no_grad;
  root.apply([&](Module& m) {
    if (auto* linear = dynamic_cast<Linear*>(&m)) {
      init::normal_(linear->weight, 0.0, initializer_range);
      if (linear->bias.defined()) init::zeros_(linear->bias);
    } else if (auto* embedding = dynamic_cast<Embedding*>(&m)) {
      init::normal_(embedding->weight, 0.0, initializer_range);
      if (embedding->padding_idx) fill_(select(embedding->weight, 0, *embedding->padding_idx), 0);
    } else if (auto* norm = dynamic_cast<LlamaRMSNorm*>(&m)) {
      init::ones_(norm->weight);
    }
  });
}

}  // namespace hearth::nn::models
