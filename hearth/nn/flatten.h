// Flatten (torch.nn.Flatten): merges dims start_dim..end_dim; by default all
// but the batch dim.
#pragma once

#include "hearth/nn/module.h"

namespace hearth::nn {

class Flatten : public Module {
 public:
  explicit Flatten(int64_t start_dim = 1, int64_t end_dim = -1)
      : Module("Flatten"), start_dim(start_dim), end_dim(end_dim) {}
  Tensor forward(const Tensor& x) override;
  std::string extra_repr() const override;

  int64_t start_dim, end_dim;
};

}  // namespace hearth::nn
