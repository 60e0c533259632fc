#include <cmath>
#include <vector>

#include <gtest/gtest.h>

#include "hearth/autograd/gradcheck.h"
#include "hearth/ops/elementwise.h"
#include "hearth/ops/factory.h"
#include "hearth/ops/nn_functional.h"
#include "hearth/ops/reduction.h"
#include "hearth/ops/view.h"

namespace hearth {
namespace {

// float64 layer norm over the last K elements of each row.
std::vector<double> reference(const Tensor& x, int64_t K, const std::vector<double>& w, const std::vector<double>& b,
                              double eps) {
  std::vector<double> v = contiguous(x).to_vector<double>();
  const int64_t M = static_cast<int64_t>(v.size()) / K;
  for (int64_t r = 0; r < M; ++r) {
    double s = 0, ss = 0;
    for (int64_t j = 0; j < K; ++j) s += v[r * K + j];
    const double m = s / K;
    for (int64_t j = 0; j < K; ++j) ss += (v[r * K + j] - m) * (v[r * K + j] - m);
    const double rstd = 1.0 / std::sqrt(ss / K + eps);
    for (int64_t j = 0; j < K; ++j)
      v[r * K + j] = (v[r * K + j] - m) * rstd * (w.empty() ? 1.0 : w[j]) + (b.empty() ? 0.0 : b[j]);
  }
  return v;
}

// Reports the worst element only, so large tensors stay cheap to check.
void expect_close(const Tensor& t, const std::vector<double>& ref, double tol) {
  std::vector<double> v = t.to_vector<double>();
  ASSERT_EQ(v.size(), ref.size());
  size_t worst = 0;
  double err = 0;
  for (size_t i = 0; i < v.size(); ++i) {
    const double e = std::isnan(v[i]) ? INFINITY : std::abs(v[i] - ref[i]);
    if (e > err) err = e, worst = i;
  }
  EXPECT_LE(err, tol) << "element " << worst << ": " << v[worst] << " vs " << ref[worst];
}

TEST(LayerNorm, HandChecked) {
  // {1, 2, 3}: mean 2, var 2/3.
  Tensor y = layer_norm(tensor(std::vector<double>{1, 2, 3}), {3}, Tensor(), Tensor(), 0.0 + 1e-12);
  const double k = 1.0 / std::sqrt(2.0 / 3.0);
  expect_close(y, {-k, 0, k}, 1e-9);
}

TEST(LayerNorm, LastDimWithAffine) {
  Tensor x = add(mul(randn({4, 3, 6}, DType::float64), 3.0), 2.0);
  Tensor w = randn({6}, DType::float64), b = randn({6}, DType::float64);
  Tensor y = layer_norm(x, {6}, w, b);
  EXPECT_EQ(y.shape(), x.shape());
  expect_close(y, reference(x, 6, w.to_vector<double>(), b.to_vector<double>(), 1e-5), 1e-10);
}

TEST(LayerNorm, TrailingTwoDims) {
  Tensor x = randn({2, 3, 4, 5}, DType::float64);
  Tensor w = randn({4, 5}, DType::float64), b = randn({4, 5}, DType::float64);
  expect_close(layer_norm(x, {4, 5}, w, b, 1e-3), reference(x, 20, w.to_vector<double>(), b.to_vector<double>(), 1e-3),
               1e-10);
  expect_close(layer_norm(x, {3, 4, 5}), reference(x, 60, {}, {}, 1e-5), 1e-10);
}

TEST(LayerNorm, NonContiguousInput) {
  Tensor x = transpose(randn({6, 4}, DType::float64), 0, 1);  // [4, 6]
  ASSERT_FALSE(x.is_contiguous());
  expect_close(layer_norm(x, {6}), reference(x, 6, {}, {}, 1e-5), 1e-10);
}

TEST(LayerNorm, HalfTypesAndFloat32Parameters) {
  Tensor x64 = randn({3, 16}, DType::float64);
  Tensor w = rand({16}), b = randn({16});
  for (DType dt : {DType::float32, DType::bfloat16, DType::float16}) {
    Tensor x = cast(x64, dt);
    Tensor y = layer_norm(x, {16}, w, b);
    EXPECT_EQ(y.dtype(), dt);
    const double tol = dt == DType::float32 ? 1e-5 : (dt == DType::bfloat16 ? 3e-2 : 5e-3);
    expect_close(y, reference(cast(x, DType::float64), 16, w.to_vector<double>(), b.to_vector<double>(), 1e-5), tol);
  }
  // Parameters in the input's own half dtype work too.
  Tensor xb = cast(x64, DType::bfloat16);
  EXPECT_EQ(layer_norm(xb, {16}, cast(w, DType::bfloat16), cast(b, DType::bfloat16)).dtype(), DType::bfloat16);
}

TEST(LayerNorm, GradientsOfHalfInputsKeepParameterDtype) {
  Tensor x = cast(randn({4, 8}), DType::bfloat16).requires_grad_();
  Tensor w = ones({8}).requires_grad_(), b = zeros({8}).requires_grad_();
  sum(layer_norm(x, {8}, w, b)).backward();
  EXPECT_EQ(x.grad().dtype(), DType::bfloat16);
  EXPECT_EQ(w.grad().dtype(), DType::float32);
  expect_close(b.grad(), std::vector<double>(8, 4.0), 0);
  expect_close(x.grad(), std::vector<double>(32, 0.0), 1e-2);  // the sum of a normalised row is constant
}

TEST(LayerNorm, GradcheckContiguous) {
  Tensor x = randn({3, 4}, DType::float64).requires_grad_();
  Tensor w = randn({4}, DType::float64).requires_grad_();
  Tensor b = randn({4}, DType::float64).requires_grad_();
  auto r = gradcheck([](const std::vector<Tensor>& in) { return layer_norm(in[0], {4}, in[1], in[2]); }, {x, w, b});
  EXPECT_TRUE(r.ok) << r.message;
  Tensor x3 = randn({2, 2, 3}, DType::float64).requires_grad_();
  Tensor w2 = randn({2, 3}, DType::float64).requires_grad_();
  auto r2 = gradcheck([](const std::vector<Tensor>& in) { return layer_norm(in[0], {2, 3}, in[1]); }, {x3, w2});
  EXPECT_TRUE(r2.ok) << r2.message;
  auto r3 = gradcheck([](const std::vector<Tensor>& in) { return layer_norm(in[0], {3}); }, {x3});
  EXPECT_TRUE(r3.ok) << r3.message;
}

TEST(LayerNorm, GradcheckNonContiguous) {
  Tensor x = transpose(randn({5, 3}, DType::float64), 0, 1);  // [3, 5]
  x.requires_grad_();
  Tensor wl = randn({5}, DType::float64).requires_grad_();
  Tensor b = randn({5}, DType::float64).requires_grad_();
  auto r = gradcheck([](const std::vector<Tensor>& in) { return layer_norm(in[0], {5}, in[1], in[2]); }, {x, wl, b});
  EXPECT_TRUE(r.ok) << r.message;
  Tensor ws = slice(randn({10}, DType::float64), 0, 0, 10, 2);  // strided weight
  ws.requires_grad_();
  auto r2 = gradcheck([](const std::vector<Tensor>& in) { return layer_norm(in[0], {5}, in[1]); }, {x, ws});
  EXPECT_TRUE(r2.ok) << r2.message;
}

TEST(LayerNorm, LargeBatchGradientsMatchReference) {
  // Big enough to split across threads and row blocks.
  const int64_t M = 1024, K = 64;
  Tensor x = randn({M, K}, DType::float64).requires_grad_();
  Tensor w = randn({K}, DType::float64).requires_grad_();
  Tensor b = randn({K}, DType::float64).requires_grad_();
  Tensor g = randn({M, K}, DType::float64);
  // A negligible eps makes sum(xhat^2) = K exactly, for the orthogonality check below.
  const double eps = 1e-12;
  layer_norm(x, {K}, w, b, eps).backward(g);
  std::vector<double> xhat = reference(x.detach(), K, {}, {}, eps), gv = g.to_vector<double>();
  std::vector<double> ref_w(K, 0.0), ref_b(K, 0.0);
  for (int64_t r = 0; r < M; ++r)
    for (int64_t j = 0; j < K; ++j) {
      ref_w[j] += gv[r * K + j] * xhat[r * K + j];
      ref_b[j] += gv[r * K + j];
    }
  expect_close(w.grad(), ref_w, 1e-9);
  expect_close(b.grad(), ref_b, 1e-9);
  // Each row's input gradient is orthogonal to 1 and to xhat.
  std::vector<double> gx = x.grad().to_vector<double>();
  for (int64_t r = 0; r < M; r += 97) {
    double s1 = 0, s2 = 0;
    for (int64_t j = 0; j < K; ++j) {
      s1 += gx[r * K + j];
      s2 += gx[r * K + j] * xhat[r * K + j];
    }
    EXPECT_NEAR(s1, 0.0, 1e-9);
    EXPECT_NEAR(s2, 0.0, 1e-9);
  }
}

TEST(LayerNorm, EmptyBatch) {
  Tensor x = zeros({0, 4}, DType::float64).requires_grad_();
  Tensor w = ones({4}, DType::float64).requires_grad_();
  Tensor y = layer_norm(x, {4}, w);
  EXPECT_EQ(y.shape(), (Shape{0, 4}));
  sum(y).backward();
  expect_close(w.grad(), {0, 0, 0, 0}, 0);
  EXPECT_EQ(x.grad().shape(), (Shape{0, 4}));
}

TEST(LayerNorm, BadInput) {
  try {
    layer_norm(randn({2, 3}), {4});
    FAIL() << "expected ShapeError";
  } catch (const ShapeError& e) {
    const std::string m = e.what();
    EXPECT_NE(m.find("[layer_norm]"), std::string::npos) << m;
    EXPECT_NE(m.find("[4]"), std::string::npos) << m;
    EXPECT_NE(m.find("[2, 3]"), std::string::npos) << m;
  }
  EXPECT_THROW(layer_norm(randn({3}), {2, 3}), ShapeError);
  EXPECT_THROW(layer_norm(randn({2, 3}), {3}, ones({2})), ShapeError);
  EXPECT_THROW(layer_norm(randn({2, 3}), {3}, Tensor(), ones({3, 1})), ShapeError);
  EXPECT_THROW(layer_norm(randn({2, 3}), {}), ValueError);
  EXPECT_THROW(layer_norm(ones({2, 3}, DType::int32), {3}), TypeError);
  EXPECT_THROW(layer_norm(randn({2, 3}), {3}, ones({3}, DType::float64)), TypeError);
}

}  // namespace
}  // namespace hearth
