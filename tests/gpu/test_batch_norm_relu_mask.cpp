// batch_norm_relu's backward on CUDA recomputes the ReLU's mask from x and the
// forward's affine map instead of reading the saved output. That is only right
// if the recomputed value rounds exactly as the forward's did, so the fused op
// must equal relu(batch_norm(x)) bit for bit, forward and backward (grad of x,
// weight and bias), on every kernel path: NHWC channel vectors and scalars,
// NCHW rows, [N, C], training and eval, half inputs beside float32 parameters.
// Inputs are centred so that many normalised values land near zero, where a
// different rounding would flip the mask.
#include <gtest/gtest.h>

#include "hearth/core/generator.h"
#include "hearth/ops/elementwise.h"
#include "hearth/ops/factory.h"
#include "hearth/ops/nn_functional.h"
#include "hearth/ops/reduction.h"
#include "hearth/ops/view.h"
#include "tests/gpu/gpu_test_util.h"

namespace hearth {
namespace {

struct MaskCase {
  const char* name;
  Shape shape;
  bool channels_last;
  bool training;
};

struct Grads {
  Tensor y, gx, gw, gb;
};

Grads run(const Tensor& x0, const Tensor& w0, const Tensor& b0, const Tensor& rm, const Tensor& rv,
          const Tensor& g, bool training, bool fused) {
  Tensor x = x0.detach().requires_grad_(true);
  Tensor w = w0.detach().requires_grad_(true), b = b0.detach().requires_grad_(true);
  Tensor y = fused ? batch_norm_relu(x, rm, rv, w, b, training)
                   : relu(batch_norm(x, rm, rv, w, b, training));
  sum(mul(y, g)).backward();
  return {y.detach(), x.grad(), w.grad(), b.grad()};
}

void expect_identical(const Tensor& a, const Tensor& b, const char* what) {
  SCOPED_TRACE(what);
  ASSERT_EQ(a.shape(), b.shape());
  Tensor diff = ne(a.to(Device()), b.to(Device()));
  EXPECT_EQ(sum(diff.to(DType::int64)).item<int64_t>(), 0) << "elements that differ";
}

class BatchNormReluMask : public ::testing::TestWithParam<DType> {};

TEST_P(BatchNormReluMask, BackwardEqualsTheComposition) {
  HEARTH_REQUIRE_CUDA();
  const DType dt = GetParam();
  const Device d = gpu_testing::cuda0();
  const std::vector<MaskCase> cases = {
      {"NHWC, 16-byte channel vectors", {8, 64, 14, 14}, true, true},
      {"NHWC, 13 channels (scalar loads)", {6, 13, 9, 7}, true, true},
      {"NCHW rows of 35", {5, 24, 5, 7}, false, true},
      {"[N, C]", {300, 40}, false, true},
      {"NHWC eval (running statistics)", {4, 32, 6, 6}, true, false},
  };
  for (const MaskCase& c : cases) {
    SCOPED_TRACE(c.name);
    manual_seed(41);
    const int64_t C = c.shape[1];
    // Parameters in float32 beside half inputs (autocast's layout); the bias
    // is drawn so that about half of the outputs are clipped.
    const DType pdt = dt == DType::float64 ? dt : DType::float32;
    Tensor x = randn(c.shape).to(d, dt);
    if (c.channels_last) x = contiguous(x, MemoryFormat::channels_last);
    Tensor w = add(randn({C}), 1.0).to(d, pdt), b = mul(randn({C}), 0.1).to(d, pdt);
    Tensor rm = mul(randn({C}), 0.1).to(d, pdt), rv = add(rand({C}), 0.5).to(d, pdt);
    Tensor g = randn(c.shape).to(d, dt);
    Tensor rm_a = c.training ? rm.clone() : rm, rv_a = c.training ? rv.clone() : rv;
    Tensor rm_b = c.training ? rm.clone() : rm, rv_b = c.training ? rv.clone() : rv;
    const Grads fused = run(x, w, b, rm_a, rv_a, g, c.training, true);
    const Grads plain = run(x, w, b, rm_b, rv_b, g, c.training, false);
    expect_identical(fused.y, plain.y, "output");
    expect_identical(fused.gx, plain.gx, "grad of x");
    expect_identical(fused.gw, plain.gw, "grad of weight");
    expect_identical(fused.gb, plain.gb, "grad of bias");
  }
}

INSTANTIATE_TEST_SUITE_P(Dtypes, BatchNormReluMask,
                         ::testing::Values(DType::float32, DType::bfloat16, DType::float16, DType::float64),
                         [](const auto& info) { return std::string(dtype_name(info.param)); });

}  // namespace
}  // namespace hearth
