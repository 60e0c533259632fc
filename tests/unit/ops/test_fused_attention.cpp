// fused_attention on the CPU (the reference kernel): equal to the composite it
// replaces for every mask it takes, the log-sum-exp it saves, rows masked
// everywhere, odd and unequal lengths, head dim 64, layouts, dropout that
// drops what the composite drops, float64 gradient checks, and the cases it
// refuses. scaled_dot_product_attention never takes it on the CPU.
#include <cmath>
#include <limits>
#include <vector>

#include <gtest/gtest.h>

#include "hearth/autograd/engine.h"
#include "hearth/autograd/gradcheck.h"
#include "hearth/autograd/node.h"
#include "hearth/core/generator.h"
#include "hearth/dispatch/registry.h"
#include "hearth/dispatch/schemas/fused_attention.h"
#include "hearth/ops/attention.h"
#include "hearth/ops/elementwise.h"
#include "hearth/ops/factory.h"
#include "hearth/ops/linalg.h"
#include "hearth/ops/nn_functional.h"
#include "hearth/ops/reduction.h"
#include "hearth/ops/view.h"

namespace hearth {
namespace {

// What fused_attention replaces: scaled_dot_product_attention's composite (the
// CPU's kernel check keeps that function unfused).
Tensor composite(const Tensor& q, const Tensor& k, const Tensor& v, const Tensor& mask, double p = 0.0,
                 bool training = false) {
  return scaled_dot_product_attention(q, k, v, mask, p, training);
}

double max_abs_diff(const Tensor& a, const Tensor& b) {
  return abs(sub(cast(a, DType::float64), cast(b, DType::float64))).max().item<double>();
}

std::string grad_fn_name(const Tensor& t) { return t.grad_fn() ? t.grad_fn()->name() : std::string("none"); }

struct Grads {
  Tensor out, q, k, v;
};

// Output and gradients of f(q, k, v) for the output gradient g.
template <typename F>
Grads run_with_grads(F f, const Tensor& q, const Tensor& k, const Tensor& v, const Tensor& g) {
  Tensor a = q.detach().requires_grad_(), b = k.detach().requires_grad_(), c = v.detach().requires_grad_();
  Tensor out = f(a, b, c);
  autograd::run_backward({out}, {g}, false);
  return {out, a.grad(), b.grad(), c.grad()};
}

void expect_same(const Grads& x, const Grads& y, double tol) {
  EXPECT_LT(max_abs_diff(x.out, y.out), tol);
  EXPECT_LT(max_abs_diff(x.q, y.q), 4 * tol);
  EXPECT_LT(max_abs_diff(x.k, y.k), 4 * tol);
  EXPECT_LT(max_abs_diff(x.v, y.v), 4 * tol);
}

TEST(OpsFusedAttention, EqualsTheCompositeForEveryMaskItTakes) {
  const int64_t B = 2, H = 3, L = 5, S = 7, D = 8, Dv = 6;  // odd lengths, L != S, Dv != D
  const std::vector<Shape> masks = {{}, {B, 1, 1, S}, {B, 1, L, S}, {L, S}, {S}, {1, 1, L, S}};
  for (const Shape& ms : masks) {
    SCOPED_TRACE("mask " + (ms.empty() ? std::string("none") : shape_str(ms)));
    manual_seed(3);
    Tensor q = randn({B, H, L, D}, DType::float64), k = randn({B, H, S, D}, DType::float64);
    Tensor v = randn({B, H, S, Dv}, DType::float64), g = randn({B, H, L, Dv}, DType::float64);
    Tensor mask = ms.empty() ? Tensor() : mul(randn(ms, DType::float64), 3.0);
    auto fused = [&](const Tensor& a, const Tensor& b, const Tensor& c) { return fused_attention(a, b, c, mask); };
    auto reference = [&](const Tensor& a, const Tensor& b, const Tensor& c) { return composite(a, b, c, mask); };
    const Grads x = run_with_grads(fused, q, k, v, g), y = run_with_grads(reference, q, k, v, g);
    EXPECT_EQ(grad_fn_name(x.out), "FusedAttentionBackward");
    expect_same(x, y, 1e-12);
  }
}

TEST(OpsFusedAttention, HeadDim64AndACustomScale) {
  manual_seed(4);
  Tensor q = randn({1, 2, 9, 64}, DType::float64), k = randn({1, 2, 13, 64}, DType::float64);
  Tensor v = randn({1, 2, 13, 64}, DType::float64), g = randn({1, 2, 9, 64}, DType::float64);
  auto fused = [](const Tensor& a, const Tensor& b, const Tensor& c) {
    return fused_attention(a, b, c, Tensor(), 0.0, false, 0.3);
  };
  auto reference = [](const Tensor& a, const Tensor& b, const Tensor& c) {
    return scaled_dot_product_attention(a, b, c, Tensor(), 0.0, false, 0.3);
  };
  expect_same(run_with_grads(fused, q, k, v, g), run_with_grads(reference, q, k, v, g), 1e-12);
}

// The op's saved statistic, read by running the op itself.
TEST(OpsFusedAttention, SavesEachRowsLogSumExp) {
  manual_seed(5);
  const int64_t B = 2, H = 2, L = 3, S = 6, D = 4;
  Tensor q = randn({B, H, L, D}, DType::float64), k = randn({B, H, S, D}, DType::float64);
  Tensor v = randn({B, H, S, D}, DType::float64), mask = randn({B, 1, 1, S}, DType::float64);
  Tensor out = Tensor::empty({B, H, L, D}, DType::float64), lse = Tensor::empty({B, H, L}, DType::float64);
  FusedAttentionAttrs a;
  a.scale = 0.5;
  OpCall call;
  call.inputs = {q, k, v, mask};
  call.outputs = {out, lse, Tensor()};
  call.set_attrs(a);
  find_op(OpId::fused_attention)->kernels[kCpu.id].fn(call);
  Tensor x = add(mul(matmul(q, transpose(k, -2, -1)), 0.5), mask);
  Tensor mx = amax(x, {-1}, true);
  Tensor want = add(squeeze(mx, -1), log(sum(exp(sub(x, mx)), {-1})));
  EXPECT_LT(max_abs_diff(lse, want), 1e-12);
  EXPECT_LT(max_abs_diff(out, matmul(softmax(x, -1), v)), 1e-12);
}

// A row masked everywhere with float's lowest: the mask is read clamped to
// 65504, so the row is the softmax of its own scores, forward and backward,
// finite, and equal to the composite given the clamped mask.
TEST(OpsFusedAttention, RowsMaskedEverywhere) {
  manual_seed(6);
  const float low = std::numeric_limits<float>::lowest();
  const int64_t B = 2, H = 2, L = 3, S = 5, D = 4;
  Tensor q = randn({B, H, L, D}, DType::float64), k = randn({B, H, S, D}, DType::float64);
  Tensor v = randn({B, H, S, D}, DType::float64), g = randn({B, H, L, D}, DType::float64);
  // Batch 0: the last two keys padded. Batch 1: every key, and so every row, masked.
  std::vector<double> m = {0, 0, 0, low, low, low, low, low, low, low};
  Tensor mask = tensor(m, {B, 1, 1, S});
  Tensor clamped = clamp(mask, -kFusedAttentionMaskLimit, kFusedAttentionMaskLimit);
  auto fused = [&](const Tensor& a, const Tensor& b, const Tensor& c) { return fused_attention(a, b, c, mask); };
  auto reference = [&](const Tensor& a, const Tensor& b, const Tensor& c) { return composite(a, b, c, clamped); };
  const Grads x = run_with_grads(fused, q, k, v, g), y = run_with_grads(reference, q, k, v, g);
  expect_same(x, y, 1e-9);
  for (const Tensor& t : {x.out, x.q, x.k, x.v}) EXPECT_EQ(sum(logical_not(isfinite(t))).item<int64_t>(), 0);
  // The padded keys of batch 0 get exactly zero weight: their values do not matter.
  Tensor v2 = v.clone();
  fill_(narrow(select(v2, 0, 0), 1, 3, 2), 1e6);
  EXPECT_EQ(max_abs_diff(select(fused_attention(q, k, v2, mask), 0, 0), select(x.out, 0, 0)), 0.0);
  // Batch 1 is attention without a mask.
  EXPECT_LT(max_abs_diff(select(x.out, 0, 1), select(composite(q, k, v, Tensor()), 0, 1)), 1e-9);
}

// Layouts pass through: q, k, v as the heads of [B, L, H, D] tensors (BERT's
// split heads) are read in place, the output takes q's memory order, and the
// gradients their inputs'.
TEST(OpsFusedAttention, SplitHeadsAreReadInPlace) {
  manual_seed(7);
  const int64_t B = 2, L = 6, H = 3, D = 8;
  auto heads = [&](const Tensor& t) { return permute(t, {0, 2, 1, 3}); };
  Tensor q = randn({B, L, H, D}, DType::float64).requires_grad_(), k = randn({B, L, H, D}, DType::float64);
  Tensor v = randn({B, L, H, D}, DType::float64);
  Tensor out = fused_attention(heads(q), heads(k), heads(v));
  EXPECT_TRUE(permute(out, {0, 2, 1, 3}).is_contiguous()) << "the output is laid out as q: [B, L, H, D]";
  EXPECT_LT(max_abs_diff(out, composite(heads(q), heads(k), heads(v), Tensor())), 1e-12);
  autograd::run_backward({out}, {ones_like(out)}, false);
  EXPECT_TRUE(q.grad().is_contiguous());
  // A transposed k (non-dense last dim) is copied first, with the same result.
  Tensor kt = transpose(randn({B, H, D, L}, DType::float64), -2, -1);
  EXPECT_LT(max_abs_diff(fused_attention(heads(q), kt, heads(v)), composite(heads(q), kt, heads(v), Tensor())), 1e-12);
}

// With dropout the CPU kernel drops element i as dropout() does with the same
// counters, so it equals the composite exactly, gradients included.
TEST(OpsFusedAttention, DropoutDropsWhatTheCompositeDrops) {
  manual_seed(8);
  const int64_t B = 2, H = 2, L = 5, S = 7, D = 8;
  Tensor q = randn({B, H, L, D}, DType::float64), k = randn({B, H, S, D}, DType::float64);
  Tensor v = randn({B, H, S, D}, DType::float64), g = randn({B, H, L, D}, DType::float64);
  Tensor mask = randn({B, 1, 1, S}, DType::float64);
  auto fused = [&](const Tensor& a, const Tensor& b, const Tensor& c) {
    manual_seed(40);
    return fused_attention(a, b, c, mask, 0.3, true);
  };
  auto reference = [&](const Tensor& a, const Tensor& b, const Tensor& c) {
    manual_seed(40);
    return composite(a, b, c, mask, 0.3, true);
  };
  const Grads x = run_with_grads(fused, q, k, v, g);
  const uint64_t fused_offset = default_generator().offset();
  const Grads y = run_with_grads(reference, q, k, v, g);
  EXPECT_EQ(default_generator().offset(), fused_offset) << "both reserve the same counters";
  expect_same(x, y, 1e-12);
  EXPECT_GT(max_abs_diff(x.out, composite(q, k, v, mask)), 1e-3) << "something was dropped";
  // Evaluation draws nothing.
  const uint64_t before = default_generator().offset();
  fused_attention(q, k, v, mask, 0.3, false);
  EXPECT_EQ(default_generator().offset(), before);
}

TEST(OpsFusedAttention, HalfTypesComputeInFloat32) {
  manual_seed(9);
  Tensor q = randn({2, 2, 17, 16}), k = randn({2, 2, 17, 16}), v = randn({2, 2, 17, 16});
  Tensor mask = mul(randn({2, 1, 1, 17}), 2.0);
  Tensor ref = composite(q, k, v, mask);
  for (DType dt : {DType::bfloat16, DType::float16}) {
    Tensor out = fused_attention(cast(q, dt), cast(k, dt), cast(v, dt), mask);
    EXPECT_EQ(out.dtype(), dt);
    EXPECT_LT(max_abs_diff(out, ref), dt == DType::bfloat16 ? 3e-2 : 4e-3) << dtype_name(dt);
  }
}

TEST(OpsFusedAttention, GradcheckFloat64) {
  manual_seed(10);
  Tensor q = randn({2, 2, 3, 4}, DType::float64).requires_grad_();
  Tensor k = randn({2, 2, 5, 4}, DType::float64).requires_grad_();
  Tensor v = randn({2, 2, 5, 3}, DType::float64).requires_grad_();
  Tensor mask = randn({2, 1, 3, 5}, DType::float64);
  GradcheckResult r =
      gradcheck([&](const std::vector<Tensor>& x) { return fused_attention(x[0], x[1], x[2], mask, 0.0, false, 0.8); },
                {q, k, v});
  EXPECT_TRUE(r.ok) << r.message;
}

TEST(OpsFusedAttention, GradcheckFloat64WithDropoutFixedBySeed) {
  manual_seed(11);
  Tensor q = randn({1, 2, 4, 4}, DType::float64).requires_grad_();
  Tensor k = randn({1, 2, 6, 4}, DType::float64).requires_grad_();
  Tensor v = randn({1, 2, 6, 5}, DType::float64).requires_grad_();
  // Reseeding on every evaluation fixes the dropped elements.
  auto f = [](const std::vector<Tensor>& x) {
    manual_seed(77);
    return fused_attention(x[0], x[1], x[2], Tensor(), 0.35, true);
  };
  GradcheckResult r = gradcheck(f, {q, k, v});
  EXPECT_TRUE(r.ok) << r.message;
}

TEST(OpsFusedAttention, RefusesWhatItCannotExpress) {
  Tensor q = randn({2, 3, 4, 8}), k = randn({2, 3, 5, 8}), v = randn({2, 3, 5, 8});
  EXPECT_THROW(fused_attention(q, k, v, randn({2, 3, 4, 5})), ValueError);  // a mask per head
  EXPECT_THROW(fused_attention(q, k, v, randn({2, 1, 4, 1})), ValueError);  // broadcast over the keys
  EXPECT_THROW(fused_attention(q, k, v, randn({5}).requires_grad_()), ValueError);
  EXPECT_THROW(fused_attention(randn({3, 4, 8}), randn({3, 5, 8}), randn({3, 5, 8})), ValueError);
  EXPECT_THROW(fused_attention(q, randn({1, 3, 5, 8}), v), ValueError);  // no broadcasting of B
  EXPECT_THROW(fused_attention(q, k, randn({2, 3, 5, 8}, DType::float64)), ValueError);
  EXPECT_THROW(fused_attention(q, k, v, Tensor(), 1.0, true), ValueError);
}

// The CPU's kernel is a reference: scaled_dot_product_attention keeps the
// composite here, and the switch turns the fused path off everywhere.
TEST(OpsFusedAttention, ScaledDotProductAttentionKeepsTheCompositeOnTheCpu) {
  Tensor q = randn({2, 3, 4, 8}).requires_grad_();
  EXPECT_FALSE(attention_runs_fused(q, q, q));
  EXPECT_NE(grad_fn_name(scaled_dot_product_attention(q, q, q)), "FusedAttentionBackward");
  const bool was = fused_attention_enabled();
  set_fused_attention_enabled(false);
  EXPECT_FALSE(fused_attention_enabled());
  set_fused_attention_enabled(was);
}

}  // namespace
}  // namespace hearth
