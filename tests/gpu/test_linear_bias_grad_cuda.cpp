// linear's bias gradient in the weight gradient's epilogue (cuBLASLt's
// BGRADB) on cuda:0 against the CPU at BERT's and odd shapes, and the paths
// that keep it apart. (bmm's parity cases are in tests/parity/parity_matmul.cpp.)
#include <iostream>
#include <string>

#include <gtest/gtest.h>

#include "hearth/core/backend_options.h"
#include "hearth/core/generator.h"
#include "hearth/dispatch/dispatch.h"
#include "hearth/dispatch/registry.h"
#include "hearth/ops/elementwise.h"
#include "hearth/ops/factory.h"
#include "hearth/ops/linalg.h"
#include "hearth/ops/nn_functional.h"
#include "hearth/ops/reduction.h"
#include "hearth/ops/view.h"
#include "tests/gpu/gpu_test_util.h"

namespace hearth::gpu_testing {
namespace {

// Sets the bias-gradient switch for a scope.
class FusedBiasGrad {
 public:
  explicit FusedBiasGrad(bool on) : before_(fused_bias_grad_enabled()) { set_fused_bias_grad_enabled(on); }
  ~FusedBiasGrad() { set_fused_bias_grad_enabled(before_); }

 private:
  bool before_;
};

// TF32 is read once per process; CTest runs this suite again with it off.
bool exact_float32() { return !float32_reduced_precision_allowed(); }

double grad_tolerance(DType dt) {
  switch (dt) {
    case DType::float64:
      return 1e-10;
    case DType::float32:
      return exact_float32() ? 1e-5 : 5e-3;
    case DType::bfloat16:
      return 1e-2;
    default:
      return 2e-3;
  }
}

class LinearBiasGradCuda : public ::testing::TestWithParam<DType> {};

// linear's weight and bias gradients on cuda:0, with the bias gradient in the
// weight gradient's GEMM (or, where cuBLASLt has no algorithm with the
// epilogue, as a product with ones), against float64/float32 references on
// the CPU computed from the same rounded values, and against the switch off.
// bfloat16 and float16 at BERT's shapes must take the epilogue; float64 never
// does; the rest is reported.
TEST_P(LinearBiasGradCuda, WeightAndBiasGradientsMatchTheCpu) {
  HEARTH_REQUIRE_CUDA();
  const DType dt = GetParam();
  const Device cuda = cuda0();
  const double tol = grad_tolerance(dt);
  for (int64_t rows : {1, 7, 8192}) {
    for (int64_t n : {768, 3072, 1, 33}) {
      for (int64_t k : {768, 64}) {
        SCOPED_TRACE("rows " + std::to_string(rows) + ", n " + std::to_string(n) + ", k " + std::to_string(k));
        manual_seed(rows * 7 + n * 3 + k);
        const Tensor x = cast(randn({rows, k}), dt), w0 = cast(randn({n, k}), dt), b0 = cast(randn({n}), dt);
        const Tensor g = cast(randn({rows, n}), dt);
        // References from the values as rounded to dt.
        const Tensor g32 = cast(g, DType::float32), x32 = cast(x, DType::float32);
        const Tensor gw_ref = dt == DType::float64 ? matmul(g.t(), x) : matmul(g32.t(), x32);
        const Tensor gb_ref = sum(cast(g, DType::float64), {0});
        auto grads = [&](bool fused) {
          FusedBiasGrad mode(fused);
          Tensor w = w0.to(cuda).requires_grad_(), b = b0.to(cuda).requires_grad_();
          linear(x.to(cuda), w, b).backward(g.to(cuda));
          return std::pair<Tensor, Tensor>{w.grad(), b.grad()};
        };
        const uint64_t before = fused_bias_grad_count();
        const auto [gw, gb] = grads(true);
        const bool took_epilogue = fused_bias_grad_count() == before + 1;
        ASSERT_EQ(gb.dtype(), dt);
        ASSERT_EQ(gb.shape(), (Shape{n}));
        ASSERT_EQ(gw.shape(), (Shape{n, k}));
        EXPECT_TRUE(gw.is_contiguous());
        EXPECT_LT(relative_error(gw, gw_ref), tol);
        EXPECT_LT(relative_error(gb, gb_ref), tol);
        if (dt == DType::float64) {
          EXPECT_FALSE(took_epilogue) << "float64 has no cuBLASLt epilogue";
        }
        if ((dt == DType::bfloat16 || dt == DType::float16) && rows == 8192 && n >= 768) {
          EXPECT_TRUE(took_epilogue) << "BERT's shapes should take cuBLASLt's BGRADB epilogue";
        }
        std::cout << "[linear bias grad] " << dtype_name(dt)
                  << (dt == DType::float32 && !exact_float32() ? " tf32" : "") << " rows " << rows << " n " << n
                  << " k " << k << ": " << (took_epilogue ? "epilogue" : "product with ones") << "\n";
        // The switch off: the bias gradient as a product of its own.
        const uint64_t before_off = fused_bias_grad_count();
        const auto [gw_off, gb_off] = grads(false);
        EXPECT_EQ(fused_bias_grad_count(), before_off);
        EXPECT_LT(relative_error(gw_off, gw_ref), tol);
        EXPECT_LT(relative_error(gb_off, gb_ref), tol);
      }
    }
  }
}

// Only the bias needs a gradient: a product with ones, whatever the switch.
TEST_P(LinearBiasGradCuda, BiasGradientWithAFrozenWeight) {
  HEARTH_REQUIRE_CUDA();
  const DType dt = GetParam();
  const Device cuda = cuda0();
  manual_seed(11);
  const Tensor x = cast(randn({33, 64}), dt), w = cast(randn({768, 64}), dt), g = cast(randn({33, 768}), dt);
  Tensor b = cast(randn({768}), dt).to(cuda).requires_grad_();
  const uint64_t before = fused_bias_grad_count();
  linear(x.to(cuda), w.to(cuda), b).backward(g.to(cuda));
  EXPECT_EQ(fused_bias_grad_count(), before);
  EXPECT_LT(relative_error(b.grad(), sum(cast(g, DType::float64), {0})), grad_tolerance(dt));
}

// The bmm kernel computes a_sums for any call it is given, whether its check
// would take it (cuBLASLt's epilogue) or not (float64, or no algorithm: its
// own kernel after the product), with a column-major a (g^T) or a row-major one.
TEST_P(LinearBiasGradCuda, BmmComputesSumsWithoutTheEpilogue) {
  HEARTH_REQUIRE_CUDA();
  const DType dt = GetParam();
  const Device cuda = cuda0();
  manual_seed(13);
  for (bool transposed : {true, false}) {
    SCOPED_TRACE(transposed ? "a column-major" : "a row-major");
    const Tensor a_cpu = cast(transposed ? randn({1, 300, 37}).transpose(1, 2) : randn({1, 37, 300}), dt);
    const Tensor b_cpu = cast(randn({1, 300, 19}), dt);
    const Tensor a = transposed ? a_cpu.transpose(1, 2).contiguous().to(cuda).transpose(1, 2) : a_cpu.to(cuda);
    OpCall call;
    call.inputs = {a, b_cpu.to(cuda)};
    call.outputs = {Tensor::empty({1, 37, 19}, dt, cuda), Tensor::empty({37}, dt, cuda)};
    dispatch(find_op("bmm"), call);
    EXPECT_LT(relative_error(call.outputs[1], sum(cast(a_cpu, DType::float64), {2}).reshape({37})), grad_tolerance(dt));
    EXPECT_LT(relative_error(call.outputs[0], bmm(cast(a_cpu, DType::float64), cast(b_cpu, DType::float64))),
              dt == DType::float32 && !exact_float32() ? 5e-3 : grad_tolerance(dt));
  }
}

INSTANTIATE_TEST_SUITE_P(Dtypes, LinearBiasGradCuda,
                         ::testing::Values(DType::float32, DType::float64, DType::bfloat16, DType::float16),
                         [](const auto& info) { return std::string(dtype_name(info.param)); });

}  // namespace
}  // namespace hearth::gpu_testing
