// Parity cases for conv2d and conv2d_relu, forward and the three backward
// kernels. Channels-last convolutions are in parity_channels_last.cpp.
#include "hearth/ops/elementwise.h"
#include "hearth/ops/factory.h"
#include "hearth/ops/nn_functional.h"
#include "hearth/ops/view.h"
#include "tests/parity/parity.h"

namespace hearth::parity {
namespace {

// conv2d forward and all three backward kernels; shapes with stride, padding,
// dilation, groups (incl. depthwise) and a 1x1.
ParityCase conv_case(const char* name, Shape x, Shape w, Pair stride, Pair padding, Pair dilation, int64_t groups,
                     bool bias) {
  return ParityCase{std::string("conv2d ") + name,
                    {"conv2d", "conv2d_backward_input", "conv2d_backward_weight", "conv2d_backward_bias"},
                    {DType::float32, DType::float64, DType::bfloat16, DType::float16},
                    [=](DType dt) {
                      return std::vector<Tensor>{random_input(x, dt), random_input(w, dt),
                                                 bias ? random_input({w[0]}, dt) : Tensor()};
                    },
                    [=](const std::vector<Tensor>& in, Device) {
                      return std::vector<Tensor>{conv2d(in[0], in[1], in[2], stride, padding, dilation, groups)};
                    },
                    true,
                    5e-3};
}
const ParityRegistrar conv_basic(conv_case("3x3 pad1", {2, 5, 11, 9}, {7, 5, 3, 3}, {1, 1}, {1, 1}, {1, 1}, 1, true));
const ParityRegistrar conv_strided(conv_case("5x3 s2 p(2,1) d(1,2)", {3, 4, 13, 12}, {6, 4, 5, 3}, {2, 2}, {2, 1},
                                             {1, 2}, 1, true));
const ParityRegistrar conv_groups(conv_case("groups=2 no bias", {2, 6, 8, 8}, {4, 3, 3, 3}, {1, 1}, {0, 0}, {1, 1}, 2,
                                            false));
const ParityRegistrar conv_depthwise(conv_case("depthwise 3x3", {2, 8, 9, 9}, {8, 1, 3, 3}, {2, 2}, {1, 1}, {1, 1}, 8,
                                               true));
const ParityRegistrar conv_1x1(conv_case("1x1 64->32", {4, 64, 7, 7}, {32, 64, 1, 1}, {1, 1}, {0, 0}, {1, 1}, 1, true));
// conv2d with the ReLU fused into the bias's pass (the bias kernel runs for
// NCHW too then), and without a bias (a ReLU pass of its own).
ParityCase conv_relu_case(const char* name, Shape x, Shape w, bool bias) {
  return ParityCase{
      std::string("conv2d_relu ") + name,
      {"conv2d_relu", "conv2d_backward_input", "conv2d_backward_weight", "conv2d_backward_bias", "relu_backward"},
      {DType::float32, DType::float64, DType::bfloat16, DType::float16},
      // Without a bias, integer inputs would give exact zeros, which an inexact
      // algorithm (Winograd in float16) turns into tiny values of either sign.
      [=](DType dt) {
        return bias ? relu_safe_conv_inputs(x, w, bias, dt)
                    : std::vector<Tensor>{random_input(x, dt), random_input(w, dt), Tensor()};
      },
      [=](const std::vector<Tensor>& in, Device) {
        return std::vector<Tensor>{conv2d_relu(in[0], in[1], in[2], {1, 1}, {1, 1})};
      },
      true,
      5e-3};
}
const ParityRegistrar conv_relu_bias(conv_relu_case("3x3 pad1 bias", {2, 5, 11, 9}, {7, 5, 3, 3}, true));
const ParityRegistrar conv_relu_nobias(conv_relu_case("3x3 pad1 no bias", {2, 5, 11, 9}, {7, 5, 3, 3}, false));

}  // namespace
}  // namespace hearth::parity
