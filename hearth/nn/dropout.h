// Dropout (torch.nn.Dropout): zeroes elements with probability p while
// training (the rest scaled by 1 / (1 - p)); the identity in eval mode.
#pragma once

#include "hearth/nn/module.h"

namespace hearth::nn {

class Dropout : public Module {
 public:
  explicit Dropout(double p = 0.5);
  Tensor forward(const Tensor& x) override;
  std::string extra_repr() const override;

  double p;
};

}  // namespace hearth::nn
