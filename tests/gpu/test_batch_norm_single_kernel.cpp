// Batch norm's single-kernel path on CUDA (hearth/backends/cuda/batch_norm_single_kernel.cu):
// it is taken where its size rule says (counted by launches), it agrees with
// the three-kernel path within the parity tolerances (its merge order differs),
// it gives the same bits on every run, and it declines what it does not take.
#include <gtest/gtest.h>

#include <algorithm>

#include "hearth/backends/cuda/batch_norm_single_kernel.h"
#include "hearth/core/generator.h"
#include "hearth/ops/elementwise.h"
#include "hearth/ops/factory.h"
#include "hearth/ops/nn_functional.h"
#include "hearth/ops/reduction.h"
#include "hearth/ops/view.h"
#include "tests/gpu/gpu_test_util.h"
#include "tests/parity/parity.h"

namespace hearth {
namespace {

enum class Form { plain, relu, add_relu };

struct StepResult {
  std::vector<Tensor> values;  // y, grad x, grad weight, grad bias, grad residual, running stats, counter
};

// One training step of the form on x (NHWC image or [N, C]), running
// statistics in the parameters' dtype (x's without parameters), a step
// counter, and the gradients of everything.
StepResult step(Form form, const Tensor& x0, const Tensor& r0, const Tensor& w0, const Tensor& b0, const Tensor& g) {
  const Device d = x0.device();
  const int64_t C = x0.shape()[1];
  Tensor x = x0.detach().requires_grad_(true), r = r0.detach().requires_grad_(true);
  Tensor w = w0.defined() ? w0.detach().requires_grad_(true) : Tensor();
  Tensor b = b0.defined() ? b0.detach().requires_grad_(true) : Tensor();
  Tensor rm = zeros({C}, w0.defined() ? w0.dtype() : x0.dtype(), d);
  Tensor rv = ones({C}, w0.defined() ? w0.dtype() : x0.dtype(), d);
  Tensor counter = full({}, 3, DType::int64, d);
  Tensor y = form == Form::plain  ? batch_norm(x, rm, rv, w, b, true, 0.1, 1e-5, counter)
             : form == Form::relu ? batch_norm_relu(x, rm, rv, w, b, true, 0.1, 1e-5, counter)
                                  : batch_norm_add_relu(x, r, rm, rv, w, b, true, 0.1, 1e-5, counter);
  sum(mul(y, g)).backward();
  StepResult out;
  out.values = {y.detach(), x.grad(), rm, rv, cast(counter, DType::float64)};
  if (w.defined()) out.values.push_back(w.grad());
  if (b.defined()) out.values.push_back(b.grad());
  if (form == Form::add_relu) out.values.push_back(r.grad());
  return out;
}

void expect_identical(const Tensor& a, const Tensor& b, size_t i) {
  SCOPED_TRACE("value " + std::to_string(i));
  ASSERT_EQ(a.shape(), b.shape());
  Tensor diff = ne(a.to(Device()), b.to(Device()));
  EXPECT_EQ(sum(diff.to(DType::int64)).item<int64_t>(), 0) << "elements that differ";
}

struct Case {
  const char* name;
  Shape shape;  // NCHW (made channels_last) or [N, C]
  Form form;
  bool affine;
};

Tensor layout(const Tensor& t) { return t.dim() == 4 ? contiguous(t, MemoryFormat::channels_last) : t; }

class BatchNormSingleKernel : public ::testing::TestWithParam<DType> {
 protected:
  void TearDown() override { cuda::set_batch_norm_single_kernel_enabled(true); }
};

TEST_P(BatchNormSingleKernel, MatchesThreeKernelsAndRepeatsBitForBit) {
  HEARTH_REQUIRE_CUDA();
  const DType dt = GetParam();
  const Device d = gpu_testing::cuda0();
  const std::vector<Case> cases = {
      {"[6272, 256] NHWC", {8, 256, 28, 28}, Form::plain, true},
      {"[6272, 64] NHWC relu, mask from x", {8, 64, 28, 28}, Form::relu, true},
      {"[6272, 512] NHWC relu, no parameters", {2, 512, 56, 56}, Form::relu, false},
      {"[25088, 64] NHWC add_relu", {32, 64, 28, 28}, Form::add_relu, true},
      {"[98, 2048] NHWC add_relu", {2, 2048, 7, 7}, Form::add_relu, false},
      {"[2, 64]", {2, 64}, Form::plain, false},
      {"[2, 256] relu", {2, 256}, Form::relu, true},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    manual_seed(7);
    const int64_t C = c.shape[1];
    Tensor x = layout(add(randn(c.shape), 0.5).to(d, dt));
    Tensor r = layout(randn(c.shape).to(d, dt));
    Tensor g = layout(randn(c.shape).to(d, dt));
    Tensor w = c.affine ? add(randn({C}), 1.0).to(d, DType::float32) : Tensor();
    Tensor b = c.affine ? mul(randn({C}), 0.1).to(d, DType::float32) : Tensor();

    cuda::set_batch_norm_single_kernel_enabled(true);
    const uint64_t before = cuda::batch_norm_single_kernel_launches();
    const StepResult one = step(c.form, x, r, w, b, g);
    EXPECT_EQ(cuda::batch_norm_single_kernel_launches() - before, 2u) << "forward and backward each one launch";
    const StepResult two = step(c.form, x, r, w, b, g);
    ASSERT_EQ(one.values.size(), two.values.size());
    for (size_t i = 0; i < one.values.size(); ++i) expect_identical(one.values[i], two.values[i], i);

    cuda::set_batch_norm_single_kernel_enabled(false);
    const uint64_t off = cuda::batch_norm_single_kernel_launches();
    const StepResult three = step(c.form, x, r, w, b, g);
    EXPECT_EQ(cuda::batch_norm_single_kernel_launches(), off) << "switched off, yet launched";
    const double tol = 4 * parity::default_tolerance(dt);
    for (size_t i = 0; i < one.values.size(); ++i)
      EXPECT_LE(gpu_testing::relative_error(one.values[i], three.values[i]), tol) << "value " << i;
  }
}

// Calls the path must leave to the three kernels: channels not a whole
// number of 16-byte vectors, NCHW (S > 1), eval, and a tensor past the L2 rule.
TEST_P(BatchNormSingleKernel, DeclinesWhatItDoesNotTake) {
  HEARTH_REQUIRE_CUDA();
  const DType dt = GetParam();
  const Device d = gpu_testing::cuda0();
  cuda::set_batch_norm_single_kernel_enabled(true);
  manual_seed(3);
  const uint64_t before = cuda::batch_norm_single_kernel_launches();
  Tensor odd = layout(randn({8, 13, 28, 28}).to(d, dt));
  batch_norm(odd, Tensor(), Tensor(), Tensor(), Tensor(), true);
  Tensor nchw = randn({8, 64, 28, 28}).to(d, dt);
  batch_norm(nchw, Tensor(), Tensor(), Tensor(), Tensor(), true);
  Tensor rm = zeros({64}, dt, d), rv = ones({64}, dt, d);
  batch_norm(layout(nchw), rm, rv, Tensor(), Tensor(), false);
  // 401408 x 64: 51 MB in bfloat16, beyond 5/8 of any current GPU's L2.
  Tensor big = layout(randn({128, 64, 56, 56}).to(d, dt));
  batch_norm(big, Tensor(), Tensor(), Tensor(), Tensor(), true);
  EXPECT_EQ(cuda::batch_norm_single_kernel_launches(), before);
  // And the same small shape, channels 64, does take it.
  batch_norm(layout(nchw), Tensor(), Tensor(), Tensor(), Tensor(), true);
  EXPECT_EQ(cuda::batch_norm_single_kernel_launches(), before + 1);
}

INSTANTIATE_TEST_SUITE_P(Dtypes, BatchNormSingleKernel,
                         ::testing::Values(DType::float32, DType::bfloat16, DType::float16),
                         [](const ::testing::TestParamInfo<DType>& i) { return std::string(dtype_name(i.param)); });

}  // namespace
}  // namespace hearth
