#include "hearth/nn/models/bert_layers.h"

#include "hearth/autograd/checkpoint.h"
#include "hearth/autograd/grad_mode.h"
#include "hearth/core/half.h"
#include "hearth/nn/init.h"
#include "hearth/ops/attention.h"
#include "hearth/ops/elementwise.h"
#include "hearth/ops/factory.h"
#include "hearth/ops/nn_functional.h"
#include "hearth/ops/view.h"

namespace hearth::nn::models {
namespace {

std::string describe(const Tensor& t) {
  return t.defined() ? t.shape_string() + " " + dtype_name(t.dtype()) : std::string("undefined");
}

bool is_index_dtype(DType d) { return d == DType::int64 || d == DType::int32; }

}  // namespace

// ---- embeddings ----

BertEmbeddings::BertEmbeddings(const BertConfig& c) : Module("BertEmbeddings") {
  word_embeddings =
      register_module("word_embeddings", std::make_shared<Embedding>(c.vocab_size, c.hidden_size, c.pad_token_id));
  position_embeddings =
      register_module("position_embeddings", std::make_shared<Embedding>(c.max_position_embeddings, c.hidden_size));
  token_type_embeddings =
      register_module("token_type_embeddings", std::make_shared<Embedding>(c.type_vocab_size, c.hidden_size));
  LayerNorm = register_module("LayerNorm", std::make_shared<nn::LayerNorm>(c.hidden_size, c.layer_norm_eps));
  dropout = register_module("dropout", std::make_shared<Dropout>(c.hidden_dropout_prob));
  position_ids = register_buffer("position_ids", unsqueeze(arange(c.max_position_embeddings), 0),
                                 /*persistent=*/false);
}

Tensor BertEmbeddings::forward(const Tensor& input_ids, const Tensor& token_type_ids) {
  HEARTH_CHECK(input_ids.defined() && input_ids.dim() == 2 && is_index_dtype(input_ids.dtype()), ShapeError,
               "[BertEmbeddings] expected input_ids [batch, seq_len] of int64, got ", describe(input_ids));
  const int64_t batch = input_ids.size(0), seq_len = input_ids.size(1);
  HEARTH_CHECK(seq_len <= position_embeddings->num_embeddings, ShapeError, "[BertEmbeddings] sequence length ", seq_len,
               " exceeds max_position_embeddings ", position_embeddings->num_embeddings,
               "; truncate the inputs to at most that many tokens");
  Tensor types = token_type_ids;
  if (types.defined()) {
    HEARTH_CHECK(types.shape() == input_ids.shape() && is_index_dtype(types.dtype()), ShapeError,
                 "[BertEmbeddings] expected token_type_ids of input_ids' shape ", input_ids.shape_string(),
                 " and an integer dtype, got ", describe(types));
  } else {
    types = zeros({batch, seq_len}, DType::int64, input_ids.device());
  }
  // Hugging Face's order of the sums, so that results match theirs bit for bit.
  Tensor x = add(word_embeddings->forward(input_ids), token_type_embeddings->forward(types));
  x = add(x, position_embeddings->forward(narrow(position_ids, 1, 0, seq_len)));
  return dropout->forward(LayerNorm->forward(x));
}

// ---- attention ----

BertSelfAttention::BertSelfAttention(const BertConfig& c)
    : Module("BertSelfAttention"), num_heads(c.num_attention_heads), head_size(c.head_size()) {
  query = register_module("query", std::make_shared<Linear>(c.hidden_size, c.hidden_size));
  key = register_module("key", std::make_shared<Linear>(c.hidden_size, c.hidden_size));
  value = register_module("value", std::make_shared<Linear>(c.hidden_size, c.hidden_size));
  dropout = register_module("dropout", std::make_shared<Dropout>(c.attention_probs_dropout_prob));
}

Tensor BertSelfAttention::forward(const Tensor& hidden, const Tensor& additive_mask) {
  const int64_t hidden_size = num_heads * head_size;
  HEARTH_CHECK(hidden.defined() && hidden.dim() == 3 && hidden.size(2) == hidden_size, ShapeError,
               "[BertSelfAttention] expected hidden states [batch, seq_len, ", hidden_size, "], got ",
               describe(hidden));
  const int64_t batch = hidden.size(0), seq_len = hidden.size(1);
  // [B, S, H] -> [B, heads, S, head_size]
  auto split_heads = [&](const Tensor& x) {
    return permute(view(x, {batch, seq_len, num_heads, head_size}), {0, 2, 1, 3});
  };
  Tensor context =
      scaled_dot_product_attention(split_heads(query->forward(hidden)), split_heads(key->forward(hidden)),
                                   split_heads(value->forward(hidden)), additive_mask, dropout->p, is_training());
  return reshape(permute(context, {0, 2, 1, 3}), {batch, seq_len, hidden_size});
}

BertResidualOutput::BertResidualOutput(const char* type_name, int64_t in_features, const BertConfig& c)
    : Module(type_name) {
  dense = register_module("dense", std::make_shared<Linear>(in_features, c.hidden_size));
  LayerNorm = register_module("LayerNorm", std::make_shared<nn::LayerNorm>(c.hidden_size, c.layer_norm_eps));
  dropout = register_module("dropout", std::make_shared<Dropout>(c.hidden_dropout_prob));
}

Tensor BertResidualOutput::forward(const Tensor& x, const Tensor& residual) {
  // LayerNorm(dropout(dense(x)) + residual), one kernel each way where the
  // backend has it (else the three modules' ops).
  return dropout_add_layer_norm(dense->forward(x), residual, LayerNorm->normalized_shape, LayerNorm->weight,
                                LayerNorm->bias, dropout->p, dropout->is_training(), LayerNorm->eps);
}

BertAttention::BertAttention(const BertConfig& c) : Module("BertAttention") {
  self = register_module("self", std::make_shared<BertSelfAttention>(c));
  output = register_module("output", std::make_shared<BertResidualOutput>("BertSelfOutput", c.hidden_size, c));
}

Tensor BertAttention::forward(const Tensor& hidden, const Tensor& additive_mask) {
  return output->forward(self->forward(hidden, additive_mask), hidden);
}

// ---- feed-forward, layer, encoder, pooler ----

BertIntermediate::BertIntermediate(const BertConfig& c) : Module("BertIntermediate"), hidden_act(c.hidden_act) {
  dense = register_module("dense", std::make_shared<Linear>(c.hidden_size, c.intermediate_size));
}

Tensor BertIntermediate::forward(const Tensor& hidden) {
  Tensor x = dense->forward(hidden);
  if (hidden_act == "gelu") return gelu(x, "none");
  if (hidden_act == "gelu_new" || hidden_act == "gelu_pytorch_tanh") return gelu(x, "tanh");
  if (hidden_act == "relu") return relu(x);
  HEARTH_THROW(ValueError, "[BertIntermediate] unknown hidden_act \"", hidden_act,
               "\"; expected gelu, gelu_new, gelu_pytorch_tanh or relu");
}

BertLayer::BertLayer(const BertConfig& c) : Module("BertLayer") {
  attention = register_module("attention", std::make_shared<BertAttention>(c));
  intermediate = register_module("intermediate", std::make_shared<BertIntermediate>(c));
  output = register_module("output", std::make_shared<BertResidualOutput>("BertOutput", c.intermediate_size, c));
}

Tensor BertLayer::forward(const Tensor& hidden, const Tensor& additive_mask) {
  Tensor attended = attention->forward(hidden, additive_mask);
  return output->forward(intermediate->forward(attended), attended);
}

BertEncoder::BertEncoder(const BertConfig& c) : Module("BertEncoder") {
  layer = register_module("layer", std::make_shared<ModuleList>());
  for (int64_t i = 0; i < c.num_hidden_layers; ++i) layer->push_back(std::make_shared<BertLayer>(c));
}

Tensor BertEncoder::forward(const Tensor& hidden, const Tensor& additive_mask) {
  Tensor x = hidden;
  const bool checkpointed = gradient_checkpointing && is_training() && grad_enabled();
  for (const auto& block : *layer) {
    auto bert_layer = std::static_pointer_cast<BertLayer>(block);
    if (!checkpointed) {
      x = bert_layer->forward(x, additive_mask);
      continue;
    }
    x = autograd::checkpoint(
        [bert_layer, additive_mask](const std::vector<Tensor>& in) {
          return std::vector<Tensor>{bert_layer->forward(in[0], additive_mask)};
        },
        {x})[0];
  }
  return x;
}

BertPooler::BertPooler(const BertConfig& c) : Module("BertPooler") {
  dense = register_module("dense", std::make_shared<Linear>(c.hidden_size, c.hidden_size));
}

Tensor BertPooler::forward(const Tensor& hidden) {
  HEARTH_CHECK(hidden.defined() && hidden.dim() == 3 && hidden.size(1) > 0, ShapeError,
               "[BertPooler] expected hidden states [batch, seq_len >= 1, hidden], got ", describe(hidden));
  return tanh(dense->forward(select(hidden, 1, 0)));
}

// ---- masks and initialisation ----

Tensor extended_attention_mask(const Tensor& attention_mask, DType dtype) {
  HEARTH_CHECK(attention_mask.defined() && (attention_mask.dim() == 2 || attention_mask.dim() == 3), ShapeError,
               "[bert] expected attention_mask [batch, seq_len] (or [batch, query_len, seq_len]) of 1 = attend, "
               "0 = padding, got ",
               describe(attention_mask));
  HEARTH_CHECK(is_floating(dtype), TypeError, "[bert] the additive attention mask needs a floating dtype, got ",
               dtype_name(dtype));
  Tensor additive = mul(rsub(cast(attention_mask, dtype), 1), lowest_finite(dtype));
  // [B, S] -> [B, 1, 1, S]: one row for every head and every query position.
  if (additive.dim() == 2) additive = unsqueeze(additive, 1);
  return unsqueeze(additive, 1);
}

void init_bert_weights(Module& root, double initializer_range) {
  NoGradGuard no_grad;
  root.apply([&](Module& m) {
    if (auto* linear = dynamic_cast<Linear*>(&m)) {
      init::normal_(linear->weight, 0.0, initializer_range);
      if (linear->bias.defined()) init::zeros_(linear->bias);
    } else if (auto* embedding = dynamic_cast<Embedding*>(&m)) {
      init::normal_(embedding->weight, 0.0, initializer_range);
      if (embedding->padding_idx) fill_(select(embedding->weight, 0, *embedding->padding_idx), 0);
    } else if (auto* norm = dynamic_cast<nn::LayerNorm*>(&m)) {
      if (norm->weight.defined()) init::ones_(norm->weight);
      if (norm->bias.defined()) init::zeros_(norm->bias);
    }
  });
}

}  // namespace hearth::nn::models
