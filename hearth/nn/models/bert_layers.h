// The building blocks of BERT, named as in Hugging Face's modeling_bert so
// that parameter paths match theirs exactly:
//
//   embeddings.{word_embeddings,position_embeddings,token_type_embeddings,LayerNorm,dropout}
//   encoder.layer.<i>.attention.self.{query,key,value}
//   encoder.layer.<i>.attention.output.{dense,LayerNorm}
//   encoder.layer.<i>.intermediate.dense
//   encoder.layer.<i>.output.{dense,LayerNorm}
//   pooler.dense
//
// Shapes: B batch, S sequence length, H hidden_size. Every block is built from
// a BertConfig and starts with PyTorch's default initialisation; BertModel
// re-initialises the whole tree the way Hugging Face does (init_bert_weights).
#pragma once

#include <memory>

#include "hearth/nn/container.h"
#include "hearth/nn/dropout.h"
#include "hearth/nn/embedding.h"
#include "hearth/nn/layer_norm.h"
#include "hearth/nn/linear.h"
#include "hearth/nn/models/bert_config.h"
#include "hearth/nn/module.h"

namespace hearth::nn::models {

// Word + position + token-type embeddings, then LayerNorm and dropout.
// Holds the non-persistent buffer position_ids [1, max_position_embeddings]
// (0, 1, 2, ...), as Hugging Face does: it is not part of state_dict().
class BertEmbeddings : public Module {
 public:
  explicit BertEmbeddings(const BertConfig& config);
  // input_ids [B, S] int64; token_type_ids [B, S] or undefined (all 0) -> [B, S, H].
  Tensor forward(const Tensor& input_ids, const Tensor& token_type_ids);
  Tensor forward(const Tensor& input_ids) override { return forward(input_ids, Tensor()); }

  std::shared_ptr<Embedding> word_embeddings, position_embeddings, token_type_embeddings;
  std::shared_ptr<nn::LayerNorm> LayerNorm;  // Hugging Face's spelling, kept for the parameter names
  std::shared_ptr<Dropout> dropout;
  Tensor position_ids;
};

// Multi-head self-attention: query, key and value projections and the
// attention itself, through hearth::scaled_dot_product_attention.
class BertSelfAttention : public Module {
 public:
  using Module::forward;  // the single-tensor one raises NotImplementedError
  explicit BertSelfAttention(const BertConfig& config);
  // hidden [B, S, H]; additive_mask broadcastable to [B, heads, S, S] or
  // undefined -> the heads' outputs concatenated, [B, S, H].
  Tensor forward(const Tensor& hidden, const Tensor& additive_mask);

  int64_t num_heads, head_size;
  std::shared_ptr<Linear> query, key, value;
  // Its probability p drops attention weights while training; the attention
  // function applies it (so a fused kernel can), not this module's forward.
  std::shared_ptr<Dropout> dropout;
};

// dense, dropout, then LayerNorm of the residual sum: LN(dropout(dense(x)) + residual),
// the last three as one op (dropout_add_layer_norm, hearth/ops/nn_functional.h)
// reading the dropout's and the LayerNorm's settings and parameters.
// BertSelfOutput and BertOutput differ only in dense's input width.
class BertResidualOutput : public Module {
 public:
  using Module::forward;  // the single-tensor one raises NotImplementedError
  BertResidualOutput(const char* type_name, int64_t in_features, const BertConfig& config);
  Tensor forward(const Tensor& x, const Tensor& residual);

  std::shared_ptr<Linear> dense;
  std::shared_ptr<nn::LayerNorm> LayerNorm;
  std::shared_ptr<Dropout> dropout;
};

class BertAttention : public Module {
 public:
  using Module::forward;  // the single-tensor one raises NotImplementedError
  explicit BertAttention(const BertConfig& config);
  Tensor forward(const Tensor& hidden, const Tensor& additive_mask);

  std::shared_ptr<BertSelfAttention> self;
  std::shared_ptr<BertResidualOutput> output;  // a BertSelfOutput
};

// dense to intermediate_size, then the activation config.hidden_act names.
class BertIntermediate : public Module {
 public:
  explicit BertIntermediate(const BertConfig& config);
  Tensor forward(const Tensor& hidden) override;

  std::string hidden_act;
  std::shared_ptr<Linear> dense;
};

class BertLayer : public Module {
 public:
  using Module::forward;  // the single-tensor one raises NotImplementedError
  explicit BertLayer(const BertConfig& config);
  Tensor forward(const Tensor& hidden, const Tensor& additive_mask);

  std::shared_ptr<BertAttention> attention;
  std::shared_ptr<BertIntermediate> intermediate;
  std::shared_ptr<BertResidualOutput> output;  // a BertOutput
};

class BertEncoder : public Module {
 public:
  using Module::forward;  // the single-tensor one raises NotImplementedError
  explicit BertEncoder(const BertConfig& config);
  // With gradient checkpointing on and in training, each layer keeps only its
  // input and recomputes the rest in backward.
  Tensor forward(const Tensor& hidden, const Tensor& additive_mask);

  std::shared_ptr<ModuleList> layer;  // of BertLayer
  bool gradient_checkpointing = false;

 protected:
  bool set_gradient_checkpointing(bool on) override {
    gradient_checkpointing = on;
    return true;
  }
};

// tanh(dense(hidden[:, 0])): the first ([CLS]) token's summary, [B, H].
class BertPooler : public Module {
 public:
  explicit BertPooler(const BertConfig& config);
  Tensor forward(const Tensor& hidden) override;

  std::shared_ptr<Linear> dense;
};

// Turns a padding mask into the additive mask attention adds to its scores:
// attention_mask [B, S] (or [B, L, S]) of 1 (attend) and 0 (padding), any
// dtype -> (1 - mask) * lowest(dtype), shaped [B, 1, 1, S] (or [B, 1, L, S]),
// in `dtype`. Padded keys then get a weight of exactly 0 after the softmax.
Tensor extended_attention_mask(const Tensor& attention_mask, DType dtype);

// Hugging Face's initialisation of a BERT tree: Linear and Embedding weights
// ~ N(0, initializer_range), Linear biases 0, Embedding padding rows 0,
// LayerNorm weight 1 and bias 0.
void init_bert_weights(Module& module, double initializer_range);

}  // namespace hearth::nn::models
