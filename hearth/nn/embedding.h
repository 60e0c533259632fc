// Embedding (torch.nn.Embedding): a lookup table of num_embeddings vectors.
#pragma once

#include <optional>

#include "hearth/nn/module.h"

namespace hearth::nn {

class Embedding : public Module {
 public:
  // weight [num_embeddings, embedding_dim] ~ N(0, 1), the padding row zeroed.
  // A negative padding_idx counts from the end, as in PyTorch; that row gets
  // no gradient.
  Embedding(int64_t num_embeddings, int64_t embedding_dim, std::optional<int64_t> padding_idx = std::nullopt);
  // indices: int64 or int32 of any shape; output [..., embedding_dim].
  Tensor forward(const Tensor& indices) override;
  void reset_parameters();
  std::string extra_repr() const override;

  int64_t num_embeddings, embedding_dim;
  std::optional<int64_t> padding_idx;  // normalised to [0, num_embeddings)
  Tensor weight;
};

}  // namespace hearth::nn
