// dropout_add_layer_norm: the fused dropout -> residual add -> layer norm
// against the three ops it replaces (the same bits forward and backward, in
// evaluation, with p == 0 and with dropout drawing what dropout() draws), its
// float64 gradients, the shapes and dtypes it takes, and the calls it leaves
// to the composite.
#include <cmath>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "hearth/autograd/engine.h"
#include "hearth/autograd/grad_mode.h"
#include "hearth/autograd/gradcheck.h"
#include "hearth/autograd/node.h"
#include "hearth/core/generator.h"
#include "hearth/ops/autocast.h"
#include "hearth/ops/elementwise.h"
#include "hearth/ops/factory.h"
#include "hearth/ops/nn_functional.h"
#include "hearth/ops/reduction.h"
#include "hearth/ops/view.h"

namespace hearth {
namespace {

// What dropout_add_layer_norm replaces, op by op.
Tensor composite(const Tensor& x, const Tensor& residual, const Shape& normalized_shape, const Tensor& w,
                 const Tensor& b, double p, bool training, double eps = 1e-5) {
  return layer_norm(add(dropout(x, p, training), residual), normalized_shape, w, b, eps);
}

std::string grad_fn_name(const Tensor& t) { return t.grad_fn() ? t.grad_fn()->name() : std::string("none"); }

// Exact equality, element by element, with the dtypes and shapes.
void expect_same(const Tensor& got, const Tensor& want, const std::string& what) {
  ASSERT_TRUE(got.defined() && want.defined()) << what;
  ASSERT_EQ(got.dtype(), want.dtype()) << what;
  ASSERT_EQ(got.shape(), want.shape()) << what;
  const std::vector<double> g = got.contiguous().to_vector<double>(), w = want.contiguous().to_vector<double>();
  size_t differing = 0, first = 0;
  for (size_t i = 0; i < g.size(); ++i)
    if (!(g[i] == w[i] || (std::isnan(g[i]) && std::isnan(w[i])))) {
      if (differing++ == 0) first = i;
    }
  EXPECT_EQ(differing, 0u) << what << ": " << differing << " of " << g.size() << " elements differ, first " << first
                           << ": " << g[first] << " vs " << w[first];
}

struct Case {
  DType x, residual, param;
  Shape shape;  // of x; the last dim is normalised
};

struct Run {
  Tensor out, gx, gr, gw, gb;
  uint64_t drawn = 0;  // Philox counters reserved
};

// One forward and backward from the generator state `seed`, fused or composite.
Run run(bool fused, const Case& c, double p, bool training, uint64_t seed = 5) {
  manual_seed(77);
  const int64_t K = c.shape.back();
  Tensor x = cast(randn(c.shape, DType::float64), c.x).requires_grad_();
  Tensor r = cast(randn(c.shape, DType::float64), c.residual).requires_grad_();
  Tensor w = cast(add(randn({K}, DType::float64), 1.0), c.param).requires_grad_();
  Tensor b = cast(randn({K}, DType::float64), c.param).requires_grad_();
  Tensor gy = cast(randn(c.shape, DType::float64), promote_types(c.x, c.residual));
  manual_seed(seed);
  default_generator().reserve(3);  // a non-zero offset
  const uint64_t before = default_generator().offset();
  Run out;
  out.out = fused ? dropout_add_layer_norm(x, r, {K}, w, b, p, training) : composite(x, r, {K}, w, b, p, training);
  out.drawn = default_generator().offset() - before;
  if (fused) {
    EXPECT_EQ(grad_fn_name(out.out), "DropoutAddLayerNormBackward");
  }
  autograd::run_backward({out.out}, {gy}, false);
  out.gx = x.grad();
  out.gr = r.grad();
  out.gw = w.grad();
  out.gb = b.grad();
  return out;
}

void expect_runs_equal(const Case& c, double p, bool training) {
  const std::string what = std::string(dtype_name(c.x)) + "/" + dtype_name(c.residual) + "/" + dtype_name(c.param) +
                           " " + shape_str(c.shape) + " p=" + std::to_string(p) + (training ? " training" : " eval");
  const Run fused = run(true, c, p, training), reference = run(false, c, p, training);
  EXPECT_EQ(fused.drawn, reference.drawn) << what;
  expect_same(fused.out, reference.out, what + ": output");
  expect_same(fused.gx, reference.gx, what + ": grad x");
  expect_same(fused.gr, reference.gr, what + ": grad residual");
  expect_same(fused.gw, reference.gw, what + ": grad weight");
  expect_same(fused.gb, reference.gb, what + ": grad bias");
}

const std::vector<Case> kCases = {
    {DType::float32, DType::float32, DType::float32, {4, 6, 33}},      // 3-D, odd hidden size
    {DType::float64, DType::float64, DType::float64, {5, 768}},        // BERT-base's hidden size
    {DType::bfloat16, DType::bfloat16, DType::bfloat16, {3, 7, 64}},   // half throughout
    {DType::float16, DType::float16, DType::float32, {9, 35}},         // half beside float32 parameters
    {DType::bfloat16, DType::float32, DType::float32, {2, 5, 48}},     // bf16 product, float32 residual stream
    {DType::float16, DType::float32, DType::float32, {1, 129}},        // a single row
};

TEST(OpsDropoutAddLayerNorm, EqualsTheCompositionInEvaluationDrawingNothing) {
  for (const Case& c : kCases) {
    expect_runs_equal(c, 0.3, false);
    EXPECT_EQ(run(true, c, 0.3, false).drawn, 0u);
  }
}

TEST(OpsDropoutAddLayerNorm, EqualsTheCompositionWithPZeroDrawingNothing) {
  for (const Case& c : kCases) {
    expect_runs_equal(c, 0.0, true);
    EXPECT_EQ(run(true, c, 0.0, true).drawn, 0u);
  }
}

// Dropout on: the same counters reserved and the same elements dropped as
// dropout() drops from the same generator state, so every result is the
// composition's, bit for bit.
TEST(OpsDropoutAddLayerNorm, DropsWhatDropoutDropsAndEqualsTheComposition) {
  for (const Case& c : kCases) {
    for (double p : {0.1, 0.5}) expect_runs_equal(c, p, true);
    EXPECT_EQ(run(true, c, 0.1, true).drawn, static_cast<uint64_t>((numel_of(c.shape) + 3) / 4));
  }
}

// The dropped elements, read from x's gradient (zero exactly where dropped,
// with a gradient of no zeros), are those of the documented Philox mapping.
TEST(OpsDropoutAddLayerNorm, DroppedElementsFollowDropoutsPhiloxMapping) {
  const int64_t M = 7, K = 37, n = M * K;
  const double p = 0.3;
  manual_seed(21);
  Tensor x = randn({M, K}, DType::float64).requires_grad_();
  Tensor r = randn({M, K}, DType::float64);
  default_generator().reserve(9);
  const uint64_t seed = default_generator().seed(), offset = default_generator().offset();
  Tensor y = dropout_add_layer_norm(x, r, {K}, Tensor(), Tensor(), p, true);
  // A gradient whose rows sum to non-zero values leaves the sum's gradient free of zeros.
  autograd::run_backward({y}, {add(rand({M, K}, DType::float64), 1.0)}, false);
  const std::vector<double> gx = x.grad().to_vector<double>();
  int64_t dropped = 0;
  for (int64_t i = 0; i < n; ++i) {
    const auto bits = philox4x32(offset + static_cast<uint64_t>(i / 4), 0, seed);
    const bool keep = uint_to_unit_float(bits[i % 4]) >= p;
    dropped += !keep;
    EXPECT_EQ(gx[i] == 0.0, !keep) << "element " << i;
  }
  EXPECT_GT(dropped, n / 5);
  EXPECT_LT(dropped, n * 2 / 5);
}

TEST(OpsDropoutAddLayerNorm, SameSeedSameResultAndTheNextCallDiffers) {
  Tensor x = randn({16, 40}), r = randn({16, 40});
  manual_seed(7);
  const std::vector<float> a = dropout_add_layer_norm(x, r, {40}, Tensor(), Tensor(), 0.5, true).to_vector<float>();
  const std::vector<float> c = dropout_add_layer_norm(x, r, {40}, Tensor(), Tensor(), 0.5, true).to_vector<float>();
  manual_seed(7);
  const std::vector<float> b = dropout_add_layer_norm(x, r, {40}, Tensor(), Tensor(), 0.5, true).to_vector<float>();
  EXPECT_EQ(a, b);
  EXPECT_NE(a, c);
}

TEST(OpsDropoutAddLayerNorm, GradcheckFloat64WithoutDropout) {
  Tensor x = randn({3, 5}, DType::float64).requires_grad_();
  Tensor r = randn({3, 5}, DType::float64).requires_grad_();
  Tensor w = randn({5}, DType::float64).requires_grad_();
  Tensor b = randn({5}, DType::float64).requires_grad_();
  auto f = [](const std::vector<Tensor>& in) {
    return dropout_add_layer_norm(in[0], in[1], {5}, in[2], in[3], 0.0, true);
  };
  auto res = gradcheck(f, {x, r, w, b});
  EXPECT_TRUE(res.ok) << res.message;
  // Two normalised dims over a 3-D input, weight only.
  Tensor x3 = randn({2, 3, 4}, DType::float64).requires_grad_();
  Tensor r3 = randn({2, 3, 4}, DType::float64).requires_grad_();
  Tensor w2 = randn({3, 4}, DType::float64).requires_grad_();
  auto f3 = [](const std::vector<Tensor>& in) {
    return dropout_add_layer_norm(in[0], in[1], {3, 4}, in[2], Tensor(), 0.2, false);
  };
  auto res3 = gradcheck(f3, {x3, r3, w2});
  EXPECT_TRUE(res3.ok) << res3.message;
}

TEST(OpsDropoutAddLayerNorm, GradcheckFloat64WithAFixedDropoutMask) {
  Tensor x = randn({4, 9}, DType::float64).requires_grad_();
  Tensor r = randn({4, 9}, DType::float64).requires_grad_();
  Tensor w = randn({9}, DType::float64).requires_grad_();
  Tensor b = randn({9}, DType::float64).requires_grad_();
  auto f = [](const std::vector<Tensor>& in) {
    manual_seed(123);  // every evaluation drops the same elements
    return dropout_add_layer_norm(in[0], in[1], {9}, in[2], in[3], 0.4, true);
  };
  auto res = gradcheck(f, {x, r, w, b});
  EXPECT_TRUE(res.ok) << res.message;
  // A single row, through a transposed (non-contiguous) x.
  Tensor xt = transpose(randn({11, 1}, DType::float64), 0, 1);
  xt.requires_grad_();
  Tensor r1 = randn({1, 11}, DType::float64).requires_grad_();
  auto f1 = [](const std::vector<Tensor>& in) {
    manual_seed(5);
    return dropout_add_layer_norm(in[0], in[1], {11}, Tensor(), Tensor(), 0.3, true);
  };
  auto res1 = gradcheck(f1, {xt, r1});
  EXPECT_TRUE(res1.ok) << res1.message;
}

TEST(OpsDropoutAddLayerNorm, NonContiguousInputsAndPartialGradients) {
  manual_seed(3);
  Tensor x = transpose(randn({33, 6}), 0, 1).requires_grad_();  // [6, 33], strided
  Tensor r = randn({6, 33});                                     // no gradient wanted
  Tensor w = randn({33}).requires_grad_();
  manual_seed(9);
  Tensor y = dropout_add_layer_norm(x, r, {33}, w, Tensor(), 0.25, true);
  EXPECT_EQ(grad_fn_name(y), "DropoutAddLayerNormBackward");
  sum(mul(y, y)).backward();
  Tensor x2 = x.detach().requires_grad_(), w2 = w.detach().requires_grad_();
  manual_seed(9);
  Tensor y2 = composite(x2, r, {33}, w2, Tensor(), 0.25, true);
  sum(mul(y2, y2)).backward();
  expect_same(y, y2, "output");
  expect_same(x.grad(), x2.grad(), "grad x");
  expect_same(w.grad(), w2.grad(), "grad weight");
  // Only the residual and the bias want gradients.
  Tensor xc = randn({6, 33}), rr = randn({6, 33}).requires_grad_(), b = randn({33}).requires_grad_();
  Tensor rr2 = rr.detach().requires_grad_(), b2 = b.detach().requires_grad_();
  manual_seed(4);
  sum(mul(dropout_add_layer_norm(xc, rr, {33}, Tensor(), b, 0.5, true), 3.0)).backward();
  manual_seed(4);
  sum(mul(composite(xc, rr2, {33}, Tensor(), b2, 0.5, true), 3.0)).backward();
  expect_same(rr.grad(), rr2.grad(), "grad residual");
  expect_same(b.grad(), b2.grad(), "grad bias");
}

TEST(OpsDropoutAddLayerNorm, EmptyInput) {
  Tensor x = randn({0, 8}).requires_grad_(), r = randn({0, 8}).requires_grad_();
  Tensor w = ones({8}).requires_grad_(), b = zeros({8}).requires_grad_();
  const uint64_t before = default_generator().offset();
  Tensor y = dropout_add_layer_norm(x, r, {8}, w, b, 0.5, true);
  EXPECT_EQ(default_generator().offset(), before);
  EXPECT_EQ(y.shape(), (Shape{0, 8}));
  sum(y).backward();
  expect_same(w.grad(), zeros({8}), "grad weight");
  expect_same(b.grad(), zeros({8}), "grad bias");
}

TEST(OpsDropoutAddLayerNorm, LeavesToTheCompositeWhatTheKernelDoesNotTake) {
  Tensor x = randn({4, 8}).requires_grad_();
  auto name_of = [](const Tensor& y) { return grad_fn_name(y); };
  // A residual that broadcasts, or is narrower than x.
  EXPECT_EQ(name_of(dropout_add_layer_norm(x, randn({8}), {8})), "LayerNormBackward");
  EXPECT_EQ(name_of(dropout_add_layer_norm(x, randn({4, 8}, DType::bfloat16), {8})), "LayerNormBackward");
  // p == 1 drops everything (as dropout, by a multiplication that keeps NaN).
  Tensor r = randn({4, 8});
  Tensor all = dropout_add_layer_norm(x, r, {8}, Tensor(), Tensor(), 1.0, true);
  EXPECT_EQ(name_of(all), "LayerNormBackward");
  expect_same(all, layer_norm(r, {8}), "p == 1");
  // Under autocast a half sum's layer norm runs in float32: the composite.
  {
    AutocastGuard autocast(kCpu, DType::bfloat16);
    Tensor xh = randn({4, 8}, DType::bfloat16).requires_grad_();
    Tensor y = dropout_add_layer_norm(xh, randn({4, 8}, DType::bfloat16), {8});
    EXPECT_EQ(y.dtype(), DType::float32);
    // A float32 residual stream is the fused op's, autocast or not.
    EXPECT_EQ(name_of(dropout_add_layer_norm(xh, r, {8})), "DropoutAddLayerNormBackward");
  }
  // Switched off, every call is the composite.
  set_fused_layer_norm_enabled(false);
  EXPECT_FALSE(fused_layer_norm_enabled());
  EXPECT_EQ(name_of(dropout_add_layer_norm(x, r, {8})), "LayerNormBackward");
  set_fused_layer_norm_enabled(true);
  EXPECT_EQ(name_of(dropout_add_layer_norm(x, r, {8})), "DropoutAddLayerNormBackward");
}

TEST(OpsDropoutAddLayerNorm, InvalidCallsFailAsTheirOpsDo) {
  Tensor x = randn({4, 8}), r = randn({4, 8});
  EXPECT_THROW(dropout_add_layer_norm(x, r, {8}, Tensor(), Tensor(), 1.5, true), ValueError);
  EXPECT_THROW(dropout_add_layer_norm(x, r, {7}), ShapeError);
  EXPECT_THROW(dropout_add_layer_norm(x, r, {8}, ones({7})), ShapeError);
  EXPECT_THROW(dropout_add_layer_norm(x, randn({3, 8}), {8}), ShapeError);
  EXPECT_THROW(dropout_add_layer_norm(x, r, {8}, Tensor(), Tensor(), 0.0, false, 0.0), ValueError);
  EXPECT_THROW(dropout_add_layer_norm(randint(0, 3, {4, 8}), r, {8}), TypeError);
}

TEST(OpsDropoutAddLayerNorm, MaskStatistics) {
  manual_seed(99);
  const int64_t M = 200, K = 500;
  Tensor x = ones({M, K}), r = zeros({M, K});
  for (double p : {0.1, 0.5, 0.8}) {
    // Each row's sum is 1 / (1 - p) where kept and 0 where dropped, so its
    // normalised values are negative exactly where dropped.
    const std::vector<float> y = dropout_add_layer_norm(x, r, {K}, Tensor(), Tensor(), p, true).to_vector<float>();
    int64_t dropped = 0;
    for (float v : y) dropped += v < 0.f;
    // Five standard deviations: sqrt(p(1-p)/n) <= 0.0016 for the fraction dropped.
    EXPECT_NEAR(static_cast<double>(dropped) / static_cast<double>(M * K), p, 0.008) << "p=" << p;
  }
}

}  // namespace
}  // namespace hearth
