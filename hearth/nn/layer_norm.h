// LayerNorm (torch.nn.LayerNorm): normalises over the trailing dims.
#pragma once

#include "hearth/nn/module.h"

namespace hearth::nn {

class LayerNorm : public Module {
 public:
  // weight (1s) and bias (0s) of shape normalized_shape when elementwise_affine.
  explicit LayerNorm(Shape normalized_shape, double eps = 1e-5, bool elementwise_affine = true, bool bias = true);
  explicit LayerNorm(int64_t normalized_size, double eps = 1e-5, bool elementwise_affine = true, bool bias = true)
      : LayerNorm(Shape{normalized_size}, eps, elementwise_affine, bias) {}
  Tensor forward(const Tensor& x) override;
  void reset_parameters();
  std::string extra_repr() const override;

  Shape normalized_shape;
  double eps;
  bool elementwise_affine;
  Tensor weight, bias;
};

}  // namespace hearth::nn
