// Conv2d (torch.nn.Conv2d, zero padding).
#pragma once

#include "hearth/nn/module.h"
#include "hearth/ops/nn_functional.h"

namespace hearth::nn {

class Conv2d : public Module {
 public:
  // weight [out, in / groups, kH, kW] ~ kaiming_uniform_(a = sqrt 5); bias [out]
  // ~ U(-1/sqrt(fan_in), 1/sqrt(fan_in)) with fan_in = in / groups * kH * kW.
  Conv2d(int64_t in_channels, int64_t out_channels, Pair kernel_size, Pair stride = {1, 1}, Pair padding = {0, 0},
         Pair dilation = {1, 1}, int64_t groups = 1, bool bias = true);
  // Square kernel, stride, padding and dilation.
  Conv2d(int64_t in_channels, int64_t out_channels, int64_t kernel_size, int64_t stride = 1, int64_t padding = 0,
         int64_t dilation = 1, int64_t groups = 1, bool bias = true);
  Tensor forward(const Tensor& x) override;
  // relu(forward(x)), with the ReLU in the bias's pass (conv2d_relu).
  Tensor forward_relu(const Tensor& x);
  void reset_parameters();
  std::string extra_repr() const override;

  int64_t in_channels, out_channels;
  Pair kernel_size, stride, padding, dilation;
  int64_t groups;
  Tensor weight, bias;
};

}  // namespace hearth::nn
