// Pooling modules: MaxPool2d, AvgPool2d, AdaptiveAvgPool2d (torch.nn names).
// The stride defaults to the kernel size, as in PyTorch.
#pragma once

#include <optional>

#include "hearth/nn/module.h"
#include "hearth/ops/nn_functional.h"

namespace hearth::nn {

class MaxPool2d : public Module {
 public:
  explicit MaxPool2d(Pair kernel_size, std::optional<Pair> stride = std::nullopt, Pair padding = {0, 0},
                     Pair dilation = {1, 1}, bool ceil_mode = false);
  explicit MaxPool2d(int64_t kernel_size, std::optional<int64_t> stride = std::nullopt, int64_t padding = 0,
                     int64_t dilation = 1, bool ceil_mode = false);
  Tensor forward(const Tensor& x) override;
  std::string extra_repr() const override;

  Pair kernel_size, stride, padding, dilation;
  bool ceil_mode;
};

class AvgPool2d : public Module {
 public:
  explicit AvgPool2d(Pair kernel_size, std::optional<Pair> stride = std::nullopt, Pair padding = {0, 0},
                     bool ceil_mode = false, bool count_include_pad = true);
  explicit AvgPool2d(int64_t kernel_size, std::optional<int64_t> stride = std::nullopt, int64_t padding = 0,
                     bool ceil_mode = false, bool count_include_pad = true);
  Tensor forward(const Tensor& x) override;
  std::string extra_repr() const override;

  Pair kernel_size, stride, padding;
  bool ceil_mode, count_include_pad;
};

class AdaptiveAvgPool2d : public Module {
 public:
  explicit AdaptiveAvgPool2d(Pair output_size);
  explicit AdaptiveAvgPool2d(int64_t output_size) : AdaptiveAvgPool2d(Pair{output_size, output_size}) {}
  Tensor forward(const Tensor& x) override;
  std::string extra_repr() const override;

  Pair output_size;
};

}  // namespace hearth::nn
