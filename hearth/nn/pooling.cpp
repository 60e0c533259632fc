#include "hearth/nn/pooling.h"

#include <sstream>

namespace hearth::nn {
namespace {

std::string pair_str(Pair p) {
  std::ostringstream os;
  os << "(" << p[0] << ", " << p[1] << ")";
  return os.str();
}
Pair square(int64_t v) { return {v, v}; }

}  // namespace

MaxPool2d::MaxPool2d(Pair kernel_size, std::optional<Pair> stride, Pair padding, Pair dilation, bool ceil_mode)
    : Module("MaxPool2d"),
      kernel_size(kernel_size),
      stride(stride.value_or(kernel_size)),
      padding(padding),
      dilation(dilation),
      ceil_mode(ceil_mode) {}

MaxPool2d::MaxPool2d(int64_t kernel_size, std::optional<int64_t> stride, int64_t padding, int64_t dilation,
                     bool ceil_mode)
    : MaxPool2d(square(kernel_size), square(stride.value_or(kernel_size)), square(padding), square(dilation),
                ceil_mode) {}

Tensor MaxPool2d::forward(const Tensor& x) { return max_pool2d(x, kernel_size, stride, padding, dilation, ceil_mode); }

std::string MaxPool2d::extra_repr() const {
  return "kernel_size=" + pair_str(kernel_size) + ", stride=" + pair_str(stride) + ", padding=" + pair_str(padding) +
         ", dilation=" + pair_str(dilation) + ", ceil_mode=" + (ceil_mode ? "true" : "false");
}

AvgPool2d::AvgPool2d(Pair kernel_size, std::optional<Pair> stride, Pair padding, bool ceil_mode, bool count_include_pad)
    : Module("AvgPool2d"),
      kernel_size(kernel_size),
      stride(stride.value_or(kernel_size)),
      padding(padding),
      ceil_mode(ceil_mode),
      count_include_pad(count_include_pad) {}

AvgPool2d::AvgPool2d(int64_t kernel_size, std::optional<int64_t> stride, int64_t padding, bool ceil_mode,
                     bool count_include_pad)
    : AvgPool2d(square(kernel_size), square(stride.value_or(kernel_size)), square(padding), ceil_mode,
                count_include_pad) {}

Tensor AvgPool2d::forward(const Tensor& x) {
  return avg_pool2d(x, kernel_size, stride, padding, ceil_mode, count_include_pad);
}

std::string AvgPool2d::extra_repr() const {
  return "kernel_size=" + pair_str(kernel_size) + ", stride=" + pair_str(stride) + ", padding=" + pair_str(padding);
}

AdaptiveAvgPool2d::AdaptiveAvgPool2d(Pair output_size) : Module("AdaptiveAvgPool2d"), output_size(output_size) {
  HEARTH_CHECK(output_size[0] >= 1 && output_size[1] >= 1, ValueError,
               "[AdaptiveAvgPool2d] output_size must be >= 1 in both dims, got ", pair_str(output_size));
}

Tensor AdaptiveAvgPool2d::forward(const Tensor& x) { return adaptive_avg_pool2d(x, output_size); }

std::string AdaptiveAvgPool2d::extra_repr() const { return "output_size=" + pair_str(output_size); }

}  // namespace hearth::nn
