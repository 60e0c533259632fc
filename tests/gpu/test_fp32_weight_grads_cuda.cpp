// linear's weight and bias gradients written in float32 into float32
// parameters' .grad under bfloat16/float16 autocast on CUDA (linalg.h,
// fp32_weight_grads_enabled): cuBLASLt's GEMM with half A and B and float32 C
// and D, the bias gradient in its BGRADB epilogue (then float32 as well) where
// it has an algorithm. At BERT's shapes against a float64 CPU reference from
// the same rounded operands (float32 accuracy) and against the switch off
// (the half gradient widened: within one rounding of the half type).
#include <iostream>
#include <string>
#include <utility>
#include <vector>

#include <gtest/gtest.h>

#include "hearth/autograd/engine.h"
#include "hearth/autograd/grad_mode.h"
#include "hearth/core/generator.h"
#include "hearth/dispatch/dispatch.h"
#include "hearth/dispatch/registry.h"
#include "hearth/ops/autocast.h"
#include "hearth/ops/elementwise.h"
#include "hearth/ops/factory.h"
#include "hearth/ops/linalg.h"
#include "hearth/ops/nn_functional.h"
#include "hearth/ops/reduction.h"
#include "hearth/ops/view.h"
#include "hearth/train/step_graph.h"
#include "tests/gpu/gpu_test_util.h"

namespace hearth::gpu_testing {
namespace {

using autograd::gradient_destinations_written;

class Fp32WeightGrads {
 public:
  explicit Fp32WeightGrads(bool on) : before_(fp32_weight_grads_enabled()) { set_fp32_weight_grads_enabled(on); }
  ~Fp32WeightGrads() { set_fp32_weight_grads_enabled(before_); }

 private:
  bool before_;
};

// float32 accumulation over up to 8192 products, compared by norm.
constexpr double kFloat32Tol = 1e-5;

// One rounding of the half type, compared by norm.
double half_tol(DType dt) { return dt == DType::bfloat16 ? 8e-3 : 1.5e-3; }

// Random float32 values that `dt` holds exactly (on the CPU), so autocast's
// casts lose nothing and a float64 reference sees the GEMM's operands.
Tensor exact_in(DType dt, const Shape& shape) { return cast(cast(randn(shape), dt), DType::float32); }

Tensor f64(const Tensor& t) { return cast(t.detach().to(Device()), DType::float64); }

// The weight and bias gradients of y = linear(x, w, b) for the upstream
// gradient v, in float64 from the same values.
std::pair<Tensor, Tensor> reference(const Tensor& x, const Tensor& v) {
  return {matmul(f64(v).t(), f64(x)), sum(f64(v), {0})};
}

struct Grads {
  Tensor w, b;
  uint64_t written = 0;
  bool epilogue = false;  // the bias gradient came from the weight gradient's epilogue
};

// One linear on cuda:0 under autocast to dt, backward with upstream v (dt-exact).
Grads linear_grads(bool on, DType dt, const Tensor& x, const Tensor& w0, const Tensor& b0, const Tensor& v) {
  Fp32WeightGrads mode(on);
  const Device cuda = cuda0();
  Tensor w = w0.to(cuda).requires_grad_(), b = b0.to(cuda).requires_grad_();
  const uint64_t written = gradient_destinations_written(), fused = fused_bias_grad_count();
  Tensor y;
  {
    AutocastGuard ac(cuda.kind, dt);
    y = linear(x.to(cuda), w, b);
  }
  y.backward(cast(v, dt).to(cuda));
  return {w.grad(), b.grad(), gradient_destinations_written() - written, fused_bias_grad_count() > fused};
}

class Fp32WeightGradsCuda : public ::testing::TestWithParam<DType> {};

// BERT-base's linears at 8192 rows (batch 64 x 128 tokens).
TEST_P(Fp32WeightGradsCuda, BertShapesMatchFloat64AndTheSwitchOff) {
  HEARTH_REQUIRE_CUDA();
  const DType dt = GetParam();
  for (const auto& [n, k] : std::vector<std::pair<int64_t, int64_t>>{{768, 768}, {3072, 768}, {768, 3072}}) {
    SCOPED_TRACE("n " + std::to_string(n) + ", k " + std::to_string(k));
    manual_seed(n + k);
    const int64_t rows = 8192;
    const Tensor x = exact_in(dt, {rows, k}), v = exact_in(dt, {rows, n});
    const Tensor w0 = randn({n, k}), b0 = randn({n});
    const auto [gw_ref, gb_ref] = reference(x, v);
    const Grads on = linear_grads(true, dt, x, w0, b0, v);
    const Grads off = linear_grads(false, dt, x, w0, b0, v);
    EXPECT_EQ(on.written, 2u);
    EXPECT_EQ(off.written, 0u);
    ASSERT_EQ(on.w.dtype(), DType::float32);
    ASSERT_EQ(on.b.dtype(), DType::float32);
    EXPECT_TRUE(on.w.is_contiguous());
    const double on_w = relative_error(on.w, gw_ref), on_b = relative_error(on.b, gb_ref);
    const double off_w = relative_error(off.w, gw_ref), off_b = relative_error(off.b, gb_ref);
    EXPECT_LT(on_w, kFloat32Tol);
    EXPECT_LT(on_b, kFloat32Tol);
    EXPECT_LT(off_w, half_tol(dt));
    EXPECT_LE(on_w, off_w);
    EXPECT_LE(on_b, off_b);
    EXPECT_LT(relative_error(on.w, off.w), half_tol(dt));
    EXPECT_LT(relative_error(on.b, off.b), half_tol(dt));
    std::cout << "[fp32 weight grads] " << dtype_name(dt) << " rows " << rows << " n " << n << " k " << k
              << ": weight error " << on_w << " (switch off " << off_w << "), bias error " << on_b << " (switch off "
              << off_b << "), bias gradient " << (on.epilogue ? "in the epilogue" : "as a product with ones")
              << " (switch off: " << (off.epilogue ? "epilogue" : "product with ones") << ")\n";
  }
}

// Two micro-batches without zero_grad: the second adds into .grad (beta = 1)
// in its memory; after zero_grad(set_to_none=false) a step overwrites it.
TEST_P(Fp32WeightGradsCuda, AccumulatesOverMicroBatches) {
  HEARTH_REQUIRE_CUDA();
  const DType dt = GetParam();
  const Device cuda = cuda0();
  Fp32WeightGrads mode(true);
  manual_seed(21);
  const int64_t rows = 8192, n = 768, k = 768;
  const Tensor x1 = exact_in(dt, {rows, k}), v1 = exact_in(dt, {rows, n});
  const Tensor x2 = exact_in(dt, {rows, k}), v2 = exact_in(dt, {rows, n});
  const auto [gw1, gb1] = reference(x1, v1);
  const auto [gw2, gb2] = reference(x2, v2);
  Tensor w = randn({n, k}).to(cuda).requires_grad_(), b = randn({n}).to(cuda).requires_grad_();
  auto step = [&](const Tensor& x, const Tensor& v) {
    Tensor y;
    {
      AutocastGuard ac(cuda.kind, dt);
      y = linear(x.to(cuda), w, b);
    }
    y.backward(cast(v, dt).to(cuda));
  };
  const uint64_t before = gradient_destinations_written();
  step(x1, v1);
  const void* w_mem = w.grad().data_ptr();
  step(x2, v2);
  EXPECT_EQ(gradient_destinations_written() - before, 4u);
  EXPECT_EQ(w.grad().data_ptr(), w_mem);
  EXPECT_LT(relative_error(w.grad(), add(gw1, gw2)), kFloat32Tol);
  EXPECT_LT(relative_error(b.grad(), add(gb1, gb2)), kFloat32Tol);
  w.zero_grad_(false);
  b.zero_grad_(false);
  step(x2, v2);
  EXPECT_EQ(gradient_destinations_written() - before, 6u);
  EXPECT_EQ(w.grad().data_ptr(), w_mem);
  EXPECT_LT(relative_error(w.grad(), gw2), kFloat32Tol);
  EXPECT_LT(relative_error(b.grad(), gb2), kFloat32Tol);
}

// BERT's feed-forward block (768 -> 3072 -> GELU -> 768) with a loss: every
// parameter's gradient written, within a half rounding of the switch off; a
// weight read by two linears keeps the plain path.
TEST_P(Fp32WeightGradsCuda, FeedForwardBlockAndASharedWeight) {
  HEARTH_REQUIRE_CUDA();
  const DType dt = GetParam();
  const Device cuda = cuda0();
  manual_seed(23);
  const Tensor x = randn({8192, 768}, DType::float32, cuda), target = randn({8192, 768}, DType::float32, cuda);
  const std::vector<Tensor> init{mul(randn({3072, 768}), 0.03), mul(randn({3072}), 0.1), mul(randn({768, 3072}), 0.03),
                                 mul(randn({768}), 0.1), mul(randn({768, 768}), 0.03)};
  auto run = [&](bool on) {
    Fp32WeightGrads mode(on);
    std::vector<Tensor> p;
    for (const Tensor& t : init) p.push_back(t.to(cuda).requires_grad_());
    const uint64_t before = gradient_destinations_written();
    Tensor loss;
    {
      AutocastGuard ac(cuda.kind, dt);
      const Tensor h = linear(gelu(linear(x, p[0], p[1])), p[2], p[3]);
      // p[4] read twice: its one cast gets two gradients (no bias: matmul's path).
      loss = add(mse_loss(h, target), mean(matmul(matmul(h, p[4]), p[4])));
    }
    loss.backward();
    std::vector<Tensor> grads;
    for (const Tensor& t : p) grads.push_back(t.grad());
    return std::make_pair(grads, gradient_destinations_written() - before);
  };
  const auto [on, written_on] = run(true);
  const auto [off, written_off] = run(false);
  EXPECT_EQ(written_on, 4u);
  EXPECT_EQ(written_off, 0u);
  for (size_t i = 0; i < on.size(); ++i) {
    SCOPED_TRACE("parameter " + std::to_string(i));
    EXPECT_EQ(on[i].dtype(), DType::float32);
    EXPECT_LT(relative_error(on[i], off[i]), 2 * half_tol(dt));
  }
}

// The bmm op with a float32 output for half operands, with a partial sum
// (beta = 1) and with a's sums (BGRADB), against float64 on the CPU.
TEST_P(Fp32WeightGradsCuda, BmmFloat32OutputFromHalfOperands) {
  HEARTH_REQUIRE_CUDA();
  const DType dt = GetParam();
  const Device cuda = cuda0();
  manual_seed(25);
  const Tensor g = cast(randn({1000, 768}), dt), x = cast(randn({1000, 768}), dt);
  const Tensor a = g.to(cuda).transpose(0, 1).unsqueeze(0), b = x.to(cuda).unsqueeze(0);  // g^T column-major
  const Tensor product = matmul(f64(g).t(), f64(x)), sums = sum(f64(g), {0});
  OpHandle op = find_op("bmm");
  {
    OpCall call;
    call.inputs = {a, b};
    call.outputs = {Tensor::empty({1, 768, 768}, DType::float32, cuda), Tensor::empty({768}, DType::float32, cuda)};
    dispatch(op, call);
    EXPECT_LT(relative_error(call.outputs[0].squeeze(0), product), kFloat32Tol);
    EXPECT_LT(relative_error(call.outputs[1], sums), kFloat32Tol);
  }
  {
    const Tensor start = randn({1, 768, 768}, DType::float32, cuda);
    const Tensor expected = add(f64(start).squeeze(0), product);
    OpCall call;
    call.inputs = {a, b, Tensor(), start};
    call.outputs = {start};
    dispatch(op, call);
    EXPECT_LT(relative_error(start.squeeze(0), expected), kFloat32Tol);
  }
}

// A recorded step (zero_grad(set_to_none=false), forward under autocast,
// backward) replays the float32 writes into .grad's memory as the eager step
// runs them.
TEST_P(Fp32WeightGradsCuda, ReplayedStepWritesWhatTheEagerStepWrites) {
  HEARTH_REQUIRE_CUDA();
  const DType dt = GetParam();
  const Device cuda = cuda0();
  Fp32WeightGrads mode(true);
  manual_seed(27);
  const Tensor x = randn({512, 768}, DType::float32, cuda), v = randn({512, 768}, DType::float32, cuda);
  auto run = [&](bool graphs) {
    manual_seed(29);
    Tensor w = mul(randn({768, 768}), 0.03).to(cuda).requires_grad_(), b = randn({768}).to(cuda).requires_grad_();
    auto step = [&] {
      w.zero_grad_(false);
      b.zero_grad_(false);
      Tensor loss;
      {
        AutocastGuard ac(cuda.kind, dt);
        loss = sum(mul(linear(x, w, b), v));
      }
      loss.backward();
    };
    train::GraphedStep graphed(cuda, step);
    const uint64_t before = gradient_destinations_written();
    for (int i = 0; i < 4; ++i) graphs ? graphed() : step();
    EXPECT_GT(gradient_destinations_written(), before);
    EXPECT_EQ(graphs, graphed.replaying()) << graphed.fallback_reason();
    return std::make_pair(w.grad(), b.grad());
  };
  const auto eager = run(false), graphed = run(true);
  EXPECT_LT(relative_error(graphed.first, eager.first), 1e-6);
  EXPECT_LT(relative_error(graphed.second, eager.second), 1e-6);
}

INSTANTIATE_TEST_SUITE_P(Dtypes, Fp32WeightGradsCuda, ::testing::Values(DType::bfloat16, DType::float16),
                         [](const auto& info) { return std::string(dtype_name(info.param)); });

}  // namespace
}  // namespace hearth::gpu_testing
