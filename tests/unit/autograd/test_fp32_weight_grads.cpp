// linear's weight and bias gradients written in float32 straight into a
// float32 parameter's .grad under autocast (fp32_weight_grads_enabled in
// linalg.h): the engine hands the leaf's .grad, through the parameter's cast,
// to linear's backward (autograd::gradient_destinations_written counts the
// gradients so written), whose GEMM outputs float32 from the bfloat16
// operands. The result must match a float64 reference from the same rounded
// operands to float32 accuracy (one rounding fewer than the bfloat16 gradient
// the switch off gives), sum over micro-batches, and leave every case the
// engine cannot hand over (a parameter read twice, a .grad someone holds, no
// autocast) as it was.
#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "hearth/autograd/engine.h"
#include "hearth/autograd/node.h"
#include "hearth/core/errors.h"
#include "hearth/core/generator.h"
#include "hearth/ops/autocast.h"
#include "hearth/ops/elementwise.h"
#include "hearth/ops/factory.h"
#include "hearth/ops/linalg.h"
#include "hearth/ops/nn_functional.h"
#include "hearth/ops/reduction.h"
#include "hearth/ops/view.h"

namespace hearth {
namespace {

using autograd::gradient_destinations_written;

// Sets the switch for a scope and restores it.
class Fp32WeightGrads {
 public:
  explicit Fp32WeightGrads(bool on) : before_(fp32_weight_grads_enabled()) { set_fp32_weight_grads_enabled(on); }
  ~Fp32WeightGrads() { set_fp32_weight_grads_enabled(before_); }

 private:
  bool before_;
};

// Random float32 values that bfloat16 holds exactly, so autocast's casts of
// them lose nothing and a float64 reference sees the GEMM's operands.
Tensor bf16_exact(const Shape& shape) { return cast(cast(randn(shape), DType::bfloat16), DType::float32); }

Tensor param(const Shape& shape) { return bf16_exact(shape).requires_grad_(); }

Tensor f64(const Tensor& t) { return cast(t.detach(), DType::float64); }

// The largest |a - ref| over the largest |ref|.
double max_error(const Tensor& a, const Tensor& ref) {
  const std::vector<double> va = f64(a).contiguous().to_vector<double>(), vr = f64(ref).contiguous().to_vector<double>();
  double err = 0, scale = 1e-30;
  for (size_t i = 0; i < va.size(); ++i) {
    err = std::max(err, std::abs(va[i] - vr[i]));
    scale = std::max(scale, std::abs(vr[i]));
  }
  return err / scale;
}

void expect_identical(const Tensor& a, const Tensor& b, const std::string& what) {
  SCOPED_TRACE(what);
  ASSERT_TRUE(a.defined() && b.defined());
  ASSERT_EQ(a.shape(), b.shape());
  ASSERT_EQ(a.dtype(), b.dtype());
  const std::vector<double> va = f64(a).contiguous().to_vector<double>(), vb = f64(b).contiguous().to_vector<double>();
  for (size_t i = 0; i < va.size(); ++i) ASSERT_EQ(va[i], vb[i]) << "element " << i;
}

// One linear under bfloat16 autocast with the loss sum(y * v); backward outside.
void linear_step(const Tensor& x, const Tensor& w, const Tensor& b, const Tensor& v) {
  Tensor loss;
  {
    AutocastGuard ac(kCpu, DType::bfloat16);
    loss = sum(mul(linear(x, w, b), v));
  }
  loss.backward();
}

// The gradients of that loss from the same (bfloat16-exact) operands in float64.
std::pair<Tensor, Tensor> reference(const Tensor& x, const Tensor& v, int64_t k) {
  const Tensor x2 = reshape(f64(x), {-1, k});
  const Tensor v2 = reshape(f64(v), {x2.size(0), -1});
  return {matmul(v2.t(), x2), sum(v2, {0})};
}

constexpr double kFloat32Tol = 2e-6;   // float32 accumulation over a few hundred rows
constexpr double kBfloat16Tol = 8e-3;  // one bfloat16 rounding

struct Grads {
  Tensor w, b;
  uint64_t written = 0;
};

Grads one_linear(bool on, const Tensor& x, const Tensor& w0, const Tensor& b0, const Tensor& v) {
  Fp32WeightGrads mode(on);
  Tensor w = w0.detach().clone().requires_grad_(), b = b0.detach().clone().requires_grad_();
  const uint64_t before = gradient_destinations_written();
  linear_step(x, w, b, v);
  return {w.grad(), b.grad(), gradient_destinations_written() - before};
}

// (a) and (b): float32 gradients within float32 accuracy of the reference, at
// least as close as the bfloat16 ones, written by the GEMM (both destinations
// taken, the bias in the weight gradient's epilogue).
TEST(Fp32WeightGrads, LinearGradientsMatchAFloat64Reference) {
  manual_seed(1);
  const int64_t k = 48, n = 40;
  const Tensor x = bf16_exact({6, 50, k}), v = bf16_exact({6, 50, n});
  const Tensor w0 = bf16_exact({n, k}), b0 = bf16_exact({n});
  const auto [gw_ref, gb_ref] = reference(x, v, k);

  const uint64_t fused_bias = fused_bias_grad_count();
  const Grads on = one_linear(true, x, w0, b0, v);
  EXPECT_EQ(fused_bias_grad_count() - fused_bias, 1u) << "the bias gradient rides the weight gradient's product";
  const Grads off = one_linear(false, x, w0, b0, v);
  EXPECT_EQ(on.written, 2u);
  EXPECT_EQ(off.written, 0u);
  for (const Tensor& g : {on.w, on.b, off.w, off.b}) EXPECT_EQ(g.dtype(), DType::float32);
  EXPECT_TRUE(on.w.is_contiguous());
  EXPECT_LT(max_error(on.w, gw_ref), kFloat32Tol);
  EXPECT_LT(max_error(on.b, gb_ref), kFloat32Tol);
  EXPECT_LT(max_error(off.w, gw_ref), kBfloat16Tol);
  EXPECT_LE(max_error(on.w, gw_ref), max_error(off.w, gw_ref));
  EXPECT_LE(max_error(on.b, gb_ref), max_error(off.b, gb_ref));
  EXPECT_GT(max_error(off.w, gw_ref), 0.0) << "the bfloat16 gradient should show its rounding";
}

// Without the bias gradient in the epilogue, the bias goes to its .grad as a
// float32 product with a row of ones.
TEST(Fp32WeightGrads, BiasGradientWithoutTheEpilogue) {
  const bool fused_before = fused_bias_grad_enabled();
  set_fused_bias_grad_enabled(false);
  manual_seed(2);
  const int64_t k = 24, n = 16;
  const Tensor x = bf16_exact({70, k}), v = bf16_exact({70, n});
  const auto [gw_ref, gb_ref] = reference(x, v, k);
  const Grads on = one_linear(true, x, bf16_exact({n, k}), bf16_exact({n}), v);
  set_fused_bias_grad_enabled(fused_before);
  EXPECT_EQ(on.written, 2u);
  EXPECT_LT(max_error(on.w, gw_ref), kFloat32Tol);
  EXPECT_LT(max_error(on.b, gb_ref), kFloat32Tol);
}

// A small MLP: every linear's parameters get their gradients written, and
// they agree with the switch off within a bfloat16 rounding.
TEST(Fp32WeightGrads, MlpTrainingStep) {
  manual_seed(3);
  const Tensor x = bf16_exact({32, 20});
  const std::vector<Tensor> init{bf16_exact({24, 20}), bf16_exact({24}), bf16_exact({10, 24}), bf16_exact({10})};
  const Tensor target = randn({32, 10});
  struct Out {
    std::vector<Tensor> grads;
    uint64_t written;
  };
  auto step = [&](bool on) {
    Fp32WeightGrads mode(on);
    std::vector<Tensor> p;
    for (const Tensor& t : init) p.push_back(t.detach().clone().requires_grad_());
    const uint64_t before = gradient_destinations_written();
    Tensor loss;
    {
      AutocastGuard ac(kCpu, DType::bfloat16);
      loss = mse_loss(linear(relu(linear(x, p[0], p[1])), p[2], p[3]), target);
    }
    loss.backward();
    Out o{{}, gradient_destinations_written() - before};
    for (const Tensor& t : p) o.grads.push_back(t.grad());
    return o;
  };
  const Out on = step(true), off = step(false);
  EXPECT_EQ(on.written, 4u);
  EXPECT_EQ(off.written, 0u);
  for (size_t i = 0; i < init.size(); ++i) {
    SCOPED_TRACE("parameter " + std::to_string(i));
    EXPECT_EQ(on.grads[i].dtype(), DType::float32);
    EXPECT_LT(max_error(on.grads[i], off.grads[i]), 2 * kBfloat16Tol);
  }
}

// (c) Two micro-batches without zero_grad: the second adds into .grad (the
// GEMM's C, beta = 1), in its memory. After zero_grad(set_to_none=false) the
// next step overwrites that memory.
TEST(Fp32WeightGrads, AccumulatesOverMicroBatches) {
  Fp32WeightGrads mode(true);
  manual_seed(4);
  const int64_t k = 32, n = 24;
  Tensor w = param({n, k}), b = param({n});
  const Tensor x1 = bf16_exact({40, k}), v1 = bf16_exact({40, n});
  const Tensor x2 = bf16_exact({40, k}), v2 = bf16_exact({40, n});
  const auto [gw1, gb1] = reference(x1, v1, k);
  const auto [gw2, gb2] = reference(x2, v2, k);

  const uint64_t before = gradient_destinations_written();
  linear_step(x1, w, b, v1);
  const void* w_mem = w.grad().data_ptr();
  const void* b_mem = b.grad().data_ptr();
  linear_step(x2, w, b, v2);
  EXPECT_EQ(gradient_destinations_written() - before, 4u);
  EXPECT_EQ(w.grad().data_ptr(), w_mem);
  EXPECT_EQ(b.grad().data_ptr(), b_mem);
  EXPECT_LT(max_error(w.grad(), add(gw1, gw2)), kFloat32Tol);
  EXPECT_LT(max_error(b.grad(), add(gb1, gb2)), kFloat32Tol);

  w.zero_grad_(false);
  b.zero_grad_(false);
  linear_step(x2, w, b, v2);
  EXPECT_EQ(gradient_destinations_written() - before, 6u);
  EXPECT_EQ(w.grad().data_ptr(), w_mem);
  EXPECT_LT(max_error(w.grad(), gw2), kFloat32Tol);
  EXPECT_LT(max_error(b.grad(), gb2), kFloat32Tol);
}

// The same with the bias gradient's destination added into beside a weight
// gradient that overwrites (the epilogue's sums then join it with an add).
TEST(Fp32WeightGrads, BiasAccumulatesBesideAWeightThatOverwrites) {
  Fp32WeightGrads mode(true);
  manual_seed(5);
  const int64_t k = 16, n = 8;
  Tensor w = param({n, k}), b = param({n});
  const Tensor x = bf16_exact({30, k}), v = bf16_exact({30, n});
  const auto [gw, gb] = reference(x, v, k);
  linear_step(x, w, b, v);
  w.zero_grad_(true);
  linear_step(x, w, b, v);
  EXPECT_LT(max_error(w.grad(), gw), kFloat32Tol);
  EXPECT_LT(max_error(b.grad(), mul(gb, 2.0)), kFloat32Tol);
}

// (d) A parameter read by two linears (its one cast gets two gradients): no
// destination for it, and the gradients are the switch-off ones bit for bit.
TEST(Fp32WeightGrads, ParameterUsedTwiceKeepsThePlainPath) {
  manual_seed(6);
  const Tensor x = bf16_exact({12, 16}), w0 = bf16_exact({16, 16}), b0 = bf16_exact({16}), b1 = bf16_exact({16});
  auto run = [&](bool on) {
    Fp32WeightGrads mode(on);
    Tensor w = w0.detach().clone().requires_grad_(), b = b0.detach().clone().requires_grad_();
    Tensor c = b1.detach().clone().requires_grad_();
    const uint64_t before = gradient_destinations_written();
    Tensor loss;
    {
      AutocastGuard ac(kCpu, DType::bfloat16);
      loss = sum(linear(relu(linear(x, w, b)), w, c));
    }
    loss.backward();
    return std::make_pair(std::vector<Tensor>{w.grad(), b.grad(), c.grad()}, gradient_destinations_written() - before);
  };
  const auto [on, written_on] = run(true);
  const auto [off, written_off] = run(false);
  EXPECT_EQ(written_on, 2u) << "only the two biases, each read once";
  EXPECT_EQ(written_off, 0u);
  expect_identical(on[0], off[0], "the shared weight");
  for (size_t i = 1; i < 3; ++i) EXPECT_LT(max_error(on[i], off[i]), kBfloat16Tol);
}

// A .grad the user holds is not written in place: it keeps its values, and
// the parameter gets the plain path's sum; the bias beside it still gets its
// destination.
TEST(Fp32WeightGrads, HeldGradKeepsThePlainPath) {
  manual_seed(7);
  const int64_t k = 16, n = 12;
  const Tensor x = bf16_exact({20, k}), v = bf16_exact({20, n});
  const Tensor w0 = bf16_exact({n, k}), b0 = bf16_exact({n});
  auto run = [&](bool on) {
    Fp32WeightGrads mode(on);
    Tensor w = w0.detach().clone().requires_grad_(), b = b0.detach().clone().requires_grad_();
    linear_step(x, w, b, v);
    const Tensor held = w.grad();
    const Tensor held_copy = held.clone();
    const uint64_t before = gradient_destinations_written();
    linear_step(x, w, b, v);
    const uint64_t written = gradient_destinations_written() - before;
    expect_identical(held, held_copy, "the held .grad");
    EXPECT_NE(w.grad().data_ptr(), held.data_ptr());
    return std::make_pair(w.grad(), written);
  };
  const auto [on, written_on] = run(true);
  const auto [off, written_off] = run(false);
  EXPECT_EQ(written_on, 1u) << "the bias only";
  EXPECT_EQ(written_off, 0u);
  const auto [gw, gb] = reference(x, v, k);
  EXPECT_LT(max_error(on, mul(gw, 2.0)), kBfloat16Tol);  // the second step's part went through bfloat16
  EXPECT_LT(max_error(off, mul(gw, 2.0)), kBfloat16Tol);
}

// Post-accumulate hooks run once per parameter, after .grad holds the result.
TEST(Fp32WeightGrads, PostAccumulateHooksSeeTheWrittenGradient) {
  Fp32WeightGrads mode(true);
  manual_seed(8);
  const int64_t k = 16, n = 12;
  Tensor w = param({n, k}), b = param({n});
  const Tensor x = bf16_exact({20, k}), v = bf16_exact({20, n});
  const auto [gw, gb] = reference(x, v, k);
  int calls = 0;
  double seen_error = 1;
  w.ensure_autograd_meta().post_accumulate_hooks.push_back([&](const Tensor& leaf) {
    ++calls;
    seen_error = max_error(leaf.grad(), gw);
  });
  const uint64_t before = gradient_destinations_written();
  linear_step(x, w, b, v);
  EXPECT_EQ(gradient_destinations_written() - before, 2u);
  EXPECT_EQ(calls, 1);
  EXPECT_LT(seen_error, kFloat32Tol);
}

// A .grad that requires grad (set by the user) is never written in place.
TEST(Fp32WeightGrads, GradThatRequiresGradKeepsThePlainPath) {
  Fp32WeightGrads mode(true);
  manual_seed(9);
  Tensor w = param({8, 8}), b = param({8});
  const Tensor start = zeros({8, 8}).requires_grad_();
  w.set_grad(start);
  const Tensor x = bf16_exact({10, 8}), v = bf16_exact({10, 8});
  const uint64_t before = gradient_destinations_written();
  linear_step(x, w, b, v);
  EXPECT_EQ(gradient_destinations_written() - before, 1u) << "the bias only";
  EXPECT_NE(w.grad().impl(), start.impl());
  EXPECT_LT(max_error(w.grad(), reference(x, v, 8).first), kBfloat16Tol);
}

// (e) float32 training without autocast: nothing is handed over and every
// gradient is the switch-off one bit for bit. float16 autocast takes the
// float32 destinations as bfloat16 does.
TEST(Fp32WeightGrads, Float32TrainingIsUnchanged) {
  manual_seed(10);
  const Tensor x = randn({30, 20}), w0 = randn({24, 20}), b0 = randn({24}), v = randn({30, 24});
  auto run = [&](bool on) {
    Fp32WeightGrads mode(on);
    Tensor w = w0.detach().clone().requires_grad_(), b = b0.detach().clone().requires_grad_();
    const uint64_t before = gradient_destinations_written();
    for (int i = 0; i < 2; ++i) sum(mul(linear(x, w, b), v)).backward();
    EXPECT_EQ(gradient_destinations_written() - before, 0u);
    return std::make_pair(w.grad(), b.grad());
  };
  const auto on = run(true), off = run(false);
  expect_identical(on.first, off.first, "weight");
  expect_identical(on.second, off.second, "bias");
}

TEST(Fp32WeightGrads, Float16Autocast) {
  Fp32WeightGrads mode(true);
  manual_seed(11);
  const int64_t k = 32, n = 16;
  // Values float16 holds exactly too (bfloat16's 8 bits of mantissa, small exponents).
  Tensor w = param({n, k}), b = param({n});
  const Tensor x = bf16_exact({50, k}), v = bf16_exact({50, n});
  const auto [gw, gb] = reference(x, v, k);
  const uint64_t before = gradient_destinations_written();
  Tensor loss;
  {
    AutocastGuard ac(kCpu, DType::float16);
    loss = sum(mul(linear(x, w, b), v));
  }
  loss.backward();
  EXPECT_EQ(gradient_destinations_written() - before, 2u);
  EXPECT_LT(max_error(w.grad(), gw), kFloat32Tol);
  EXPECT_LT(max_error(b.grad(), gb), kFloat32Tol);
}

// A second backward through a released graph still fails at the cast.
TEST(Fp32WeightGrads, SecondBackwardThroughAReleasedCastFails) {
  Tensor w = param({4, 4});
  const Tensor z = cast(w, DType::bfloat16);
  z.backward(ones({4, 4}, DType::bfloat16));
  EXPECT_TRUE(w.grad().defined());
  EXPECT_THROW(z.backward(ones({4, 4}, DType::bfloat16)), AutogradError);
}

}  // namespace
}  // namespace hearth
