// The CPU convolutions on their default path keep float32's accuracy: every
// pass (forward, gradients of x, the weight and the bias) against the same
// pass in float64 from the same inputs, within 3 times the error of the
// reference kernels (im2col + OpenBLAS), which sum in short runs. oneDNN's
// implementations differ here (bench/NOTES.md, section 48): the brgemm
// forward's error grew with C * kH * kW (6x the reference's at 512 channels),
// the blocked backward-weights' with N * OH * OW (10x at 2 images of 112 x
// 112, 15x at 224 x 224), so the shapes below are large enough in those to
// tell. Every call goes to oneDNN where it would at full size
// (HEARTH_ONEDNN_ALWAYS), on the layouts it gets by default.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "hearth/backends/cpu/onednn/onednn.h"
#include "hearth/core/generator.h"
#include "hearth/dispatch/cpu_reference.h"
#include "hearth/ops/elementwise.h"
#include "hearth/ops/factory.h"
#include "hearth/ops/nn_functional.h"
#include "hearth/ops/reduction.h"
#include "hearth/ops/view.h"
#include "tests/support/scoped_env.h"

namespace hearth {
namespace {

struct Case {
  std::string name;
  Shape x, w;  // [N, C, H, W], [O, C, kH, kW]
  int64_t stride = 1, padding = 0;
};

// y, and the gradients of x, the weight and the bias.
struct Passes {
  std::vector<Tensor> out;
};
const char* const kPassNames[] = {"forward", "grad x", "grad weight", "grad bias"};

struct Inputs {
  Tensor x, w, b, gy;  // float32; float64 computes from the same values
};

Inputs draw(const Case& c, uint64_t seed) {
  manual_seed(seed);
  const double fan_in = static_cast<double>(c.w[1] * c.w[2] * c.w[3]);
  Inputs in;
  in.x = randn(c.x);
  in.w = mul(randn(c.w), std::sqrt(2.0 / fan_in));  // Kaiming: outputs of unit scale
  in.b = mul(randn({c.w[0]}), 0.1);
  const int64_t oh = (c.x[2] + 2 * c.padding - c.w[2]) / c.stride + 1;
  const int64_t ow = (c.x[3] + 2 * c.padding - c.w[3]) / c.stride + 1;
  in.gy = randn({c.x[0], c.w[0], oh, ow});
  return in;
}

// Fresh leaves each run (a float32 cast of float32 is the same tensor, whose
// gradient would accumulate over runs).
Tensor leaf(const Tensor& t, DType dt) { return cast(t, dt).detach().requires_grad_(); }

Passes run(const Case& c, const Inputs& in, DType dt) {
  const Tensor x = leaf(in.x, dt), w = leaf(in.w, dt), b = leaf(in.b, dt);
  const Tensor y = conv2d(x, w, b, {c.stride, c.stride}, {c.padding, c.padding});
  sum(mul(y, cast(in.gy, dt))).backward();
  return {{y.detach(), x.grad(), w.grad(), b.grad()}};
}

// max |a - ref| / max |ref|: the error of a sum is relative to its terms' scale.
double relative_error(const Tensor& a, const Tensor& ref) {
  const std::vector<double> av = cast(contiguous(a), DType::float64).to_vector<double>();
  const std::vector<double> rv = contiguous(ref).to_vector<double>();
  double diff = 0, scale = 0;
  for (size_t i = 0; i < rv.size(); ++i) {
    diff = std::max(diff, std::abs(av[i] - rv[i]));
    scale = std::max(scale, std::abs(rv[i]));
  }
  return diff / scale;
}

// Whether this build has oneDNN: it takes a convolution it is sent.
bool onednn_built() {
  testing::ScopedEnv off("HEARTH_CPU_REFERENCE", "0");
  testing::ScopedEnv always("HEARTH_ONEDNN_ALWAYS", "1");
  const uint64_t before = cpu::onednn::calls_taken();
  conv2d(zeros({1, 16, 4, 4}), zeros({16, 16, 3, 3}));
  return cpu::onednn::calls_taken() != before;
}

// Every pass of the default path within 3x the reference kernels' error
// (never asked below float32's rounding of the result, 2^-24).
void expect_as_accurate_as_the_reference(const Case& c, uint64_t min_onednn_calls) {
  testing::ScopedEnv off("HEARTH_CPU_REFERENCE", "0");
  testing::ScopedEnv always("HEARTH_ONEDNN_ALWAYS", "1");
  const Inputs in = draw(c, 11);
  const Passes exact = run(c, in, DType::float64);
  const uint64_t before = cpu::onednn::calls_taken();
  const Passes fast = run(c, in, DType::float32);
  const uint64_t taken = cpu::onednn::calls_taken() - before;
  if (onednn_built()) {
    EXPECT_GE(taken, min_onednn_calls) << c.name << ": the passes oneDNN computes";
  }
  Passes reference;
  {
    ForceCpuReference forced;
    reference = run(c, in, DType::float32);
  }
  for (size_t k = 0; k < exact.out.size(); ++k) {
    const double err = relative_error(fast.out[k], exact.out[k]);
    const double ref_err = relative_error(reference.out[k], exact.out[k]);
    EXPECT_LE(err, 3 * std::max(ref_err, std::ldexp(1.0, -24)))
        << c.name << " " << kPassNames[k] << ": error " << err << " against the reference kernels' " << ref_err;
  }
}

// VGG16's first three blocks, layer by layer, at half its image size
// (112 x 112, halved by each block's pooling), 2 images: 25,088 positions in
// each weight gradient of the first block.
TEST(OnednnConvolutionAccuracy, Vgg16FirstBlocksEveryPass) {
  const std::vector<Case> layers = {
      {"vgg16 conv1_1 3->64 112", {2, 3, 112, 112}, {64, 3, 3, 3}, 1, 1},
      {"vgg16 conv1_2 64->64 112", {2, 64, 112, 112}, {64, 64, 3, 3}, 1, 1},
      {"vgg16 conv2_1 64->128 56", {2, 64, 56, 56}, {128, 64, 3, 3}, 1, 1},
      {"vgg16 conv2_2 128->128 56", {2, 128, 56, 56}, {128, 128, 3, 3}, 1, 1},
      {"vgg16 conv3_1 128->256 28", {2, 128, 28, 28}, {256, 128, 3, 3}, 1, 1},
      {"vgg16 conv3_2 256->256 28", {2, 256, 28, 28}, {256, 256, 3, 3}, 1, 1},
  };
  // The stem's 3 channels run on plain layouts: all three passes; the others'
  // forward and backward-data at least.
  for (size_t i = 0; i < layers.size(); ++i) expect_as_accurate_as_the_reference(layers[i], i == 0 ? 3 : 2);
}

// Each kind of convolution oneDNN is given: a 3-channel stem (plain layouts),
// a 3x3 of many channels (blocked), 1x1 both ways (plain GEMMs), strided.
TEST(OnednnConvolutionAccuracy, EveryShapeClassEveryPass) {
  const std::vector<Case> cases = {
      {"stem 7x7 stride 2 3->64", {2, 3, 64, 64}, {64, 3, 7, 7}, 2, 3},
      {"3x3 512->512 7", {2, 512, 7, 7}, {512, 512, 3, 3}, 1, 1},
      {"1x1 256->64", {2, 256, 28, 28}, {64, 256, 1, 1}, 1, 0},
      {"1x1 64->256", {2, 64, 28, 28}, {256, 64, 1, 1}, 1, 0},
      {"3x3 stride 2 64->128", {2, 64, 56, 56}, {128, 64, 3, 3}, 2, 1},
      {"1x1 stride 2 256->512", {2, 256, 28, 28}, {512, 256, 1, 1}, 2, 0},
  };
  for (const Case& c : cases) expect_as_accurate_as_the_reference(c, 2);
}

// The bias gradient, every path's, sums each channel over N * H * W (25,088
// terms here): within 4 roundings of the float64 sum, at any length.
TEST(OnednnConvolutionAccuracy, BiasGradientSumsLongRowsToFloat32Accuracy) {
  manual_seed(12);
  const Tensor gy = randn({2, 16, 112, 112});
  const Tensor x = zeros({2, 16, 112, 112});
  const Tensor w = zeros({16, 16, 1, 1});
  auto bias_grad = [&](DType dt) {
    const Tensor b = zeros({16}, dt).requires_grad_();
    sum(mul(conv2d(cast(x, dt), cast(w, dt), b), cast(gy, dt))).backward();
    return b.grad();
  };
  const Tensor exact = bias_grad(DType::float64);
  EXPECT_LE(relative_error(bias_grad(DType::float32), exact), 4 * std::ldexp(1.0, -24));
  ForceCpuReference forced;
  EXPECT_LE(relative_error(bias_grad(DType::float32), exact), 4 * std::ldexp(1.0, -24));
}

}  // namespace
}  // namespace hearth
