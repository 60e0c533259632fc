// attention_softmax: the fused scale + mask + softmax + dropout against a
// float64 loop and against the composite of ops it replaces, its gradients,
// and the cases it leaves to the composite.
#include <cmath>
#include <limits>
#include <vector>

#include <gtest/gtest.h>

#include "hearth/autograd/engine.h"
#include "hearth/autograd/grad_mode.h"
#include "hearth/autograd/gradcheck.h"
#include "hearth/autograd/node.h"
#include "hearth/core/generator.h"
#include "hearth/ops/attention.h"
#include "hearth/ops/elementwise.h"
#include "hearth/ops/factory.h"
#include "hearth/ops/nn_functional.h"
#include "hearth/ops/reduction.h"
#include "hearth/ops/view.h"

namespace hearth {
namespace {

// What attention_softmax replaces, op by op.
Tensor composite(const Tensor& scores, const Tensor& mask, double scale, double p, bool training) {
  Tensor x = mul(scores, scale);
  if (mask.defined()) x = add(x, mask);
  return dropout(softmax(x, -1), p, training);
}

std::string grad_fn_name(const Tensor& t) { return t.grad_fn() ? t.grad_fn()->name() : std::string("none"); }

double max_abs_diff(const Tensor& a, const Tensor& b) {
  return abs(sub(cast(a, DType::float64), cast(b, DType::float64))).max().item<double>();
}

// Where each of two tensors is exactly zero (dropped, or masked to nothing).
std::vector<bool> zeros_of(const Tensor& t) {
  std::vector<bool> z;
  for (bool v : eq(t, 0.0).reshape({-1}).to_vector<bool>()) z.push_back(v);
  return z;
}

TEST(OpsAttentionSoftmax, MatchesAFloat64LoopWithBroadcastMaskAndDropout) {
  manual_seed(11);
  const int64_t B = 2, H = 3, L = 4, S = 7;
  const double scale = 0.37, p = 0.3;
  Tensor scores = randn({B, H, L, S}, DType::float64);
  Tensor mask = mul(randn({B, 1, 1, S}, DType::float64), 2.0);
  default_generator().reserve(3);  // a non-zero offset
  const uint64_t seed = default_generator().seed(), offset = default_generator().offset();
  Tensor probs = attention_softmax(scores, mask, scale, p, true);
  EXPECT_EQ(default_generator().offset(), offset + (B * H * L * S + 3) / 4);  // as dropout reserves
  const std::vector<double> x = scores.to_vector<double>(), m = mask.to_vector<double>();
  const std::vector<double> got = probs.to_vector<double>();
  int dropped = 0;
  for (int64_t r = 0; r < B * H * L; ++r) {
    const int64_t b = r / (H * L);
    std::vector<double> e(S);
    double mx = -INFINITY, total = 0;
    for (int64_t c = 0; c < S; ++c) mx = std::max(mx, e[c] = x[r * S + c] * scale + m[b * S + c]);
    for (double& v : e) total += (v = std::exp(v - mx));
    for (int64_t c = 0; c < S; ++c) {
      const int64_t i = r * S + c;
      const auto bits = philox4x32(offset + static_cast<uint64_t>(i / 4), 0, seed);
      const bool keep = uint_to_unit_float(bits[i % 4]) >= p;
      dropped += !keep;
      EXPECT_NEAR(got[i], keep ? e[c] / total / (1 - p) : 0.0, 1e-12) << "row " << r << " col " << c;
    }
  }
  EXPECT_GT(dropped, 0);
  // Evaluation: no dropout and no random numbers.
  const uint64_t before = default_generator().offset();
  Tensor eval = attention_softmax(scores, mask, scale, p, false);
  EXPECT_EQ(default_generator().offset(), before);
  EXPECT_LT(max_abs_diff(sum(eval, {-1}), ones({B, H, L}, DType::float64)), 1e-12);
}

TEST(OpsAttentionSoftmax, TakesTheFusedPathForBertsMask) {
  Tensor scores = randn({2, 3, 4, 5}).requires_grad_();
  EXPECT_EQ(grad_fn_name(attention_softmax(scores, zeros({2, 1, 1, 5}), 0.5, 0.1, true)), "AttentionSoftmaxBackward");
  EXPECT_EQ(grad_fn_name(attention_softmax(scores, Tensor(), 0.5, 0.1, false)), "AttentionSoftmaxBackward");
}

// The same values as the composite, the same dropped elements from the same
// seed, and the same gradients, for each mask broadcast the kernel expresses.
TEST(OpsAttentionSoftmax, EqualsTheCompositeItReplaces) {
  const int64_t B = 2, H = 3, L = 5, S = 9;
  const std::vector<Shape> masks = {{}, {B, 1, 1, S}, {L, S}, {S}, {B, H, 1, S}, {B, 1, L, S}, {L, 1}, {B, H, L, S}};
  for (DType dt : {DType::float32, DType::float64}) {
    const double tol = dt == DType::float64 ? 1e-14 : 2e-6;
    for (const Shape& ms : masks) {
      for (double p : {0.0, 0.4}) {
        SCOPED_TRACE(std::string(dtype_name(dt)) + " mask " + (ms.empty() ? "none" : shape_str(ms)) +
                     " p=" + std::to_string(p));
        manual_seed(21);
        Tensor scores = randn({B, H, L, S}, dt);
        Tensor mask = ms.empty() ? Tensor() : mul(randn(ms, dt), 3.0);
        Tensor v = randn({B, H, L, S}, dt);
        Tensor sa = scores.detach().requires_grad_(), sb = scores.detach().requires_grad_();
        manual_seed(5);
        Tensor fused = attention_softmax(sa, mask, 0.125, p, true);
        const uint64_t offset_fused = default_generator().offset();
        manual_seed(5);
        Tensor reference = composite(sb, mask, 0.125, p, true);
        EXPECT_EQ(default_generator().offset(), offset_fused);
        EXPECT_EQ(grad_fn_name(fused), "AttentionSoftmaxBackward");
        EXPECT_EQ(zeros_of(fused), zeros_of(reference));
        EXPECT_LT(max_abs_diff(fused, reference), tol);
        autograd::run_backward({fused}, {v}, false);
        autograd::run_backward({reference}, {v}, false);
        EXPECT_LT(max_abs_diff(sa.grad(), sb.grad()), 4 * tol);
      }
    }
  }
}

TEST(OpsAttentionSoftmax, MaskedRowsAndLowestValues) {
  manual_seed(8);
  // BERT's padding mask: float's lowest on padded keys, and a row padded
  // everywhere (uniform, not NaN, as in the composite).
  const float low = std::numeric_limits<float>::lowest();
  Tensor scores = randn({2, 1, 3, 4});
  Tensor mask = tensor(std::vector<float>{0, 0, low, low, low, low, low, low}, {2, 1, 1, 4});
  Tensor probs = attention_softmax(scores, mask, 1.0);
  EXPECT_LT(max_abs_diff(probs, composite(scores, mask, 1.0, 0.0, false)), 1e-7);
  EXPECT_EQ(sum(logical_not(isfinite(probs))).item<int64_t>(), 0);
  EXPECT_LT(max_abs_diff(select(probs, 0, 1), full({1, 3, 4}, 0.25)), 1e-7);
  EXPECT_EQ(sum(select(select(probs, -1, 3), 0, 0)).item<double>(), 0.0);
}

TEST(OpsAttentionSoftmax, HalfTypesComputeInFloat32) {
  manual_seed(9);
  Tensor scores = mul(randn({3, 4, 64}), 4.0), mask = randn({3, 1, 64});
  Tensor ref = attention_softmax(scores, mask, 0.125);
  for (DType dt : {DType::bfloat16, DType::float16}) {
    // A float32 mask is cast to the scores' dtype.
    Tensor out = attention_softmax(cast(scores, dt), mask, 0.125);
    EXPECT_EQ(out.dtype(), dt);
    EXPECT_LT(max_abs_diff(out, ref), dt == DType::bfloat16 ? 1e-2 : 2e-3) << dtype_name(dt);
  }
}

TEST(OpsAttentionSoftmax, GradcheckFloat64WithoutDropout) {
  manual_seed(12);
  Tensor scores = randn({2, 3, 4, 6}, DType::float64).requires_grad_();
  Tensor mask = randn({2, 1, 1, 6}, DType::float64);
  GradcheckResult r =
      gradcheck([&](const std::vector<Tensor>& x) { return attention_softmax(x[0], mask, 0.7, 0.3, false); }, {scores});
  EXPECT_TRUE(r.ok) << r.message;
  // A non-contiguous view of the scores, no mask.
  Tensor st = randn({2, 6, 5}, DType::float64).requires_grad_();
  r = gradcheck([](const std::vector<Tensor>& x) { return attention_softmax(transpose(x[0], 1, 2), Tensor(), 1.3); },
                {st});
  EXPECT_TRUE(r.ok) << r.message;
}

TEST(OpsAttentionSoftmax, GradcheckFloat64WithDropoutFixedBySeed) {
  manual_seed(13);
  Tensor scores = randn({2, 2, 5, 7}, DType::float64).requires_grad_();
  Tensor mask = randn({5, 7}, DType::float64);
  // Reseeding on every evaluation fixes the dropped elements.
  auto f = [&](const std::vector<Tensor>& x) {
    manual_seed(77);
    return attention_softmax(x[0], mask, 0.45, 0.35, true);
  };
  EXPECT_GT(sum(eq(f({scores}), 0.0)).item<int64_t>(), 0) << "some elements must be dropped";
  GradcheckResult r = gradcheck(f, {scores});
  EXPECT_TRUE(r.ok) << r.message;
}

TEST(OpsAttentionSoftmax, LeavesToTheCompositeWhatTheKernelCannotExpress) {
  manual_seed(14);
  // A mask that requires grad gets its gradient through the composite.
  Tensor scores = randn({2, 3, 4}, DType::float64).requires_grad_();
  Tensor mask = randn({1, 4}, DType::float64).requires_grad_();
  EXPECT_NE(grad_fn_name(attention_softmax(scores, mask, 0.5)), "AttentionSoftmaxBackward");
  GradcheckResult r =
      gradcheck([](const std::vector<Tensor>& x) { return attention_softmax(x[0], x[1], 0.5); }, {scores, mask});
  EXPECT_TRUE(r.ok) << r.message;
  // A mask that enlarges the scores: [3, 4] + [2, 3, 4].
  Tensor small = randn({3, 4});
  Tensor big_mask = randn({2, 3, 4});
  Tensor out = attention_softmax(small, big_mask, 1.0);
  EXPECT_EQ(out.shape(), (Shape{2, 3, 4}));
  EXPECT_LT(max_abs_diff(out, composite(small, big_mask, 1.0, 0.0, false)), 1e-7);
  // Four row dims no stride merges: [2, 3, 4, 5, S] against [2, 1, 4, 1, S].
  Tensor s5 = randn({2, 3, 4, 5, 6}).requires_grad_();
  Tensor m5 = randn({2, 1, 4, 1, 6});
  manual_seed(3);
  Tensor a = attention_softmax(s5, m5, 0.5, 0.2, true);
  EXPECT_EQ(grad_fn_name(a), "DropoutBackward");
  manual_seed(3);
  EXPECT_EQ(max_abs_diff(a, composite(s5, m5, 0.5, 0.2, true)), 0.0);
  // p == 1 drops everything, as dropout does.
  EXPECT_EQ(abs(attention_softmax(small, Tensor(), 1.0, 1.0, true)).max().item<double>(), 0.0);
  // Five row dims that merge to three run fused: [2, 3, 4, 5, S] against [2, 3, 1, 1, S].
  EXPECT_EQ(grad_fn_name(attention_softmax(s5, randn({2, 3, 1, 1, 6}), 0.5)), "AttentionSoftmaxBackward");
}

TEST(OpsAttentionSoftmax, Errors) {
  Tensor s = randn({2, 3});
  EXPECT_THROW(attention_softmax(ones({2, 3}, DType::int64), Tensor(), 1.0), TypeError);
  EXPECT_THROW(attention_softmax(s, ones({3}, DType::int64), 1.0), TypeError);
  EXPECT_THROW(attention_softmax(s, Tensor(), 1.0, 1.5, true), ValueError);
  EXPECT_THROW(attention_softmax(s, randn({4}), 1.0), ShapeError);
}

}  // namespace
}  // namespace hearth
