#include "hearth/nn/conv.h"

#include <cmath>
#include <sstream>

#include "hearth/nn/init.h"
#include "hearth/ops/factory.h"

namespace hearth::nn {
namespace {

std::string pair_str(Pair p) {
  std::ostringstream os;
  os << "(" << p[0] << ", " << p[1] << ")";
  return os.str();
}

}  // namespace

Conv2d::Conv2d(int64_t in_channels, int64_t out_channels, Pair kernel_size, Pair stride, Pair padding, Pair dilation,
               int64_t groups, bool bias)
    : Module("Conv2d"),
      in_channels(in_channels),
      out_channels(out_channels),
      kernel_size(kernel_size),
      stride(stride),
      padding(padding),
      dilation(dilation),
      groups(groups) {
  HEARTH_CHECK(groups >= 1, ValueError, "[Conv2d] groups must be a positive integer, got ", groups);
  HEARTH_CHECK(in_channels % groups == 0, ValueError, "[Conv2d] in_channels=", in_channels,
               " must be divisible by groups=", groups);
  HEARTH_CHECK(out_channels % groups == 0, ValueError, "[Conv2d] out_channels=", out_channels,
               " must be divisible by groups=", groups);
  HEARTH_CHECK(kernel_size[0] >= 1 && kernel_size[1] >= 1, ValueError, "[Conv2d] kernel_size must be >= 1, got ",
               pair_str(kernel_size));
  weight = register_parameter("weight", empty({out_channels, in_channels / groups, kernel_size[0], kernel_size[1]}));
  this->bias = register_parameter("bias", bias ? empty({out_channels}) : Tensor());
  reset_parameters();
}

Conv2d::Conv2d(int64_t in_channels, int64_t out_channels, int64_t kernel_size, int64_t stride, int64_t padding,
               int64_t dilation, int64_t groups, bool bias)
    : Conv2d(in_channels, out_channels, Pair{kernel_size, kernel_size}, Pair{stride, stride}, Pair{padding, padding},
             Pair{dilation, dilation}, groups, bias) {}

void Conv2d::reset_parameters() {
  init::kaiming_uniform_(weight, std::sqrt(5.0));
  if (bias.defined()) {
    const int64_t fan_in = init::calculate_fan_in_and_fan_out(weight).first;
    const double bound = fan_in > 0 ? 1.0 / std::sqrt(static_cast<double>(fan_in)) : 0.0;
    init::uniform_(bias, -bound, bound);
  }
}

Tensor Conv2d::forward(const Tensor& x) { return conv2d(x, weight, bias, stride, padding, dilation, groups); }

Tensor Conv2d::forward_relu(const Tensor& x) { return conv2d_relu(x, weight, bias, stride, padding, dilation, groups); }

std::string Conv2d::extra_repr() const {
  std::string s = std::to_string(in_channels) + ", " + std::to_string(out_channels) +
                  ", kernel_size=" + pair_str(kernel_size) + ", stride=" + pair_str(stride);
  if (padding != Pair{0, 0}) s += ", padding=" + pair_str(padding);
  if (dilation != Pair{1, 1}) s += ", dilation=" + pair_str(dilation);
  if (groups != 1) s += ", groups=" + std::to_string(groups);
  if (!bias.defined()) s += ", bias=false";
  return s;
}

}  // namespace hearth::nn
