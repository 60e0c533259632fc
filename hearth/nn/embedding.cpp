#include "hearth/nn/embedding.h"

#include "hearth/autograd/grad_mode.h"
#include "hearth/nn/init.h"
#include "hearth/ops/elementwise.h"
#include "hearth/ops/factory.h"
#include "hearth/ops/nn_functional.h"
#include "hearth/ops/view.h"

namespace hearth::nn {

Embedding::Embedding(int64_t num_embeddings, int64_t embedding_dim, std::optional<int64_t> padding_idx)
    : Module("Embedding"), num_embeddings(num_embeddings), embedding_dim(embedding_dim) {
  HEARTH_CHECK(num_embeddings >= 0 && embedding_dim >= 0, ValueError,
               "[Embedding] num_embeddings and embedding_dim must be non-negative, got ", num_embeddings, " and ",
               embedding_dim);
  if (padding_idx) {
    HEARTH_CHECK(*padding_idx >= -num_embeddings && *padding_idx < num_embeddings, ValueError,
                 "[Embedding] padding_idx must be within [-", num_embeddings, ", ", num_embeddings, "), got ",
                 *padding_idx);
    this->padding_idx = *padding_idx < 0 ? *padding_idx + num_embeddings : *padding_idx;
  }
  weight = register_parameter("weight", empty({num_embeddings, embedding_dim}));
  reset_parameters();
}

void Embedding::reset_parameters() {
  init::normal_(weight);
  if (padding_idx) {
    NoGradGuard no_grad;
    fill_(select(weight, 0, *padding_idx), 0);
  }
}

Tensor Embedding::forward(const Tensor& indices) { return embedding(indices, weight, padding_idx.value_or(-1)); }

std::string Embedding::extra_repr() const {
  std::string s = std::to_string(num_embeddings) + ", " + std::to_string(embedding_dim);
  if (padding_idx) s += ", padding_idx=" + std::to_string(*padding_idx);
  return s;
}

}  // namespace hearth::nn
