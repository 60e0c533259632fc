#include <cmath>
#include <limits>
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

// float64 reference along `dim` of a contiguous row-major tensor.
std::vector<double> reference(const std::vector<double>& x, const Shape& shape, int64_t dim, bool log) {
  int64_t outer = 1, inner = 1;
  for (int64_t d = 0; d < dim; ++d) outer *= shape[d];
  for (int64_t d = dim + 1; d < static_cast<int64_t>(shape.size()); ++d) inner *= shape[d];
  const int64_t D = shape[dim];
  std::vector<double> y(x.size());
  for (int64_t o = 0; o < outer; ++o)
    for (int64_t i = 0; i < inner; ++i) {
      double mx = -INFINITY, s = 0;
      for (int64_t k = 0; k < D; ++k) mx = std::max(mx, x[(o * D + k) * inner + i]);
      for (int64_t k = 0; k < D; ++k) s += std::exp(x[(o * D + k) * inner + i] - mx);
      for (int64_t k = 0; k < D; ++k) {
        const double v = x[(o * D + k) * inner + i] - mx;
        y[(o * D + k) * inner + i] = log ? v - std::log(s) : std::exp(v) / s;
      }
    }
  return y;
}

void expect_close(const Tensor& t, const std::vector<double>& ref, double tol) {
  std::vector<double> v = t.to_vector<double>();
  ASSERT_EQ(v.size(), ref.size());
  for (size_t i = 0; i < v.size(); ++i) EXPECT_NEAR(v[i], ref[i], tol) << "element " << i;
}

// A leaf of `shape` whose last two dims are transposed in memory.
Tensor strided_leaf(const Shape& shape) {
  Shape swapped = shape;
  std::swap(swapped[swapped.size() - 1], swapped[swapped.size() - 2]);
  Tensor t = transpose(randn(swapped, DType::float64), -2, -1);
  EXPECT_FALSE(t.is_contiguous());
  t.requires_grad_();
  return t;
}

TEST(Softmax, HandCheckedValues) {
  Tensor x = tensor({1.f, 2.f, 3.f});
  expect_close(softmax(x, 0), {0.09003057, 0.24472847, 0.66524096}, 1e-6);
  expect_close(log_softmax(x, -1), {-2.40760596, -1.40760596, -0.40760596}, 1e-6);
}

TEST(Softmax, MatchesReferenceAlongEveryDim) {
  const Shape shape{2, 3, 4};
  Tensor x = randn(shape, DType::float64);
  std::vector<double> xv = x.to_vector<double>();
  for (int64_t d = 0; d < 3; ++d) {
    expect_close(softmax(x, d), reference(xv, shape, d, false), 1e-12);
    expect_close(log_softmax(x, d - 3), reference(xv, shape, d, true), 1e-12);
  }
}

TEST(Softmax, RowsSumToOne) {
  Tensor y = softmax(randn({5, 7}), 1);
  expect_close(sum(y, {1}), std::vector<double>(5, 1.0), 1e-5);
}

TEST(Softmax, StableForLargeLogits) {
  Tensor x = tensor({1000.f, 1001.f, 1002.f});
  expect_close(softmax(x, 0), {0.09003057, 0.24472847, 0.66524096}, 1e-6);
  expect_close(log_softmax(x, 0), {-2.40760596, -1.40760596, -0.40760596}, 1e-4);
  Tensor neg = tensor({-1000.f, -1001.f});
  for (double v : log_softmax(neg, 0).to_vector<double>()) EXPECT_TRUE(std::isfinite(v));
}

TEST(Softmax, MinusInfinityIsZeroProbabilityAndFullyMaskedRowIsNan) {
  const float inf = std::numeric_limits<float>::infinity();
  Tensor x = tensor(std::vector<float>{0.f, -inf, 0.f, -inf, -inf, -inf}, {2, 3});
  std::vector<double> y = softmax(x, 1).to_vector<double>();
  EXPECT_NEAR(y[0], 0.5, 1e-7);
  EXPECT_EQ(y[1], 0.0);
  EXPECT_NEAR(y[2], 0.5, 1e-7);
  for (int i = 3; i < 6; ++i) EXPECT_TRUE(std::isnan(y[i]));
  EXPECT_EQ(log_softmax(x, 1).to_vector<double>()[1], -INFINITY);
}

TEST(Softmax, NonContiguousInputMatchesContiguous) {
  Tensor base = randn({4, 6}, DType::float64);
  Tensor xt = transpose(base, 0, 1);  // [6, 4], strided
  Tensor dense = contiguous(xt);
  for (int64_t d = 0; d < 2; ++d) {
    EXPECT_EQ(softmax(xt, d).to_vector<double>(), softmax(dense, d).to_vector<double>());
    EXPECT_EQ(log_softmax(xt, d).to_vector<double>(), log_softmax(dense, d).to_vector<double>());
  }
  Tensor sliced = slice(base, 1, 0, 6, 2);  // [4, 3] with stride 2
  expect_close(softmax(sliced, 1), reference(contiguous(sliced).to_vector<double>(), {4, 3}, 1, false), 1e-12);
}

TEST(Softmax, HalfTypesComputeInFloat) {
  const Shape shape{3, 8};
  Tensor x = randn(shape, DType::float64);
  std::vector<double> xv = x.to_vector<double>();
  for (DType dt : {DType::float32, DType::bfloat16, DType::float16}) {
    Tensor xd = cast(x, dt);
    std::vector<double> xr = xd.to_vector<double>();  // the rounded inputs
    const double tol = dt == DType::float32 ? 1e-6 : (dt == DType::bfloat16 ? 1e-2 : 2e-3);
    Tensor y = softmax(xd, 1), ly = log_softmax(xd, 1);
    EXPECT_EQ(y.dtype(), dt);
    expect_close(y, reference(xr, shape, 1, false), tol);
    expect_close(ly, reference(xr, shape, 1, true), tol * 4);
  }
}

TEST(Softmax, EmptySizeOneAndScalar) {
  EXPECT_EQ(softmax(zeros({0, 3}), 1).shape(), (Shape{0, 3}));
  EXPECT_EQ(log_softmax(zeros({2, 0}), 1).shape(), (Shape{2, 0}));
  expect_close(softmax(randn({3, 1}), 1), {1, 1, 1}, 0);
  expect_close(log_softmax(randn({3, 1}), 1), {0, 0, 0}, 0);
  Tensor s = scalar_tensor(5.0, DType::float32);
  EXPECT_EQ(softmax(s, 0).dim(), 0);
  EXPECT_EQ(softmax(s, -1).item<double>(), 1.0);
}

TEST(Softmax, BackwardOfEmptyInput) {
  Tensor x = zeros({0, 4}, DType::float64).requires_grad_();
  sum(softmax(x, 1)).backward();
  EXPECT_EQ(x.grad().shape(), (Shape{0, 4}));
}

TEST(Softmax, GradcheckContiguous) {
  for (int64_t d : {0, 1, 2}) {
    Tensor x = randn({2, 3, 4}, DType::float64).requires_grad_();
    auto r1 = gradcheck([d](const std::vector<Tensor>& in) { return softmax(in[0], d); }, {x});
    EXPECT_TRUE(r1.ok) << "dim " << d << ": " << r1.message;
    auto r2 = gradcheck([d](const std::vector<Tensor>& in) { return log_softmax(in[0], d); }, {x});
    EXPECT_TRUE(r2.ok) << "dim " << d << ": " << r2.message;
  }
}

TEST(Softmax, GradcheckNonContiguous) {
  Tensor x = strided_leaf({3, 5});
  for (int64_t d : {0, 1}) {
    auto r1 = gradcheck([d](const std::vector<Tensor>& in) { return softmax(in[0], d); }, {x});
    EXPECT_TRUE(r1.ok) << r1.message;
    auto r2 = gradcheck([d](const std::vector<Tensor>& in) { return log_softmax(in[0], d); }, {x});
    EXPECT_TRUE(r2.ok) << r2.message;
  }
}

TEST(Softmax, GradientOfFloat32MatchesFormula) {
  // d/dx sum(softmax(x) * v) = y * (v - sum(v * y))
  Tensor x = tensor({0.5f, -1.f, 2.f}).requires_grad_();
  Tensor v = tensor({1.f, 2.f, 3.f});
  Tensor y = softmax(x, 0);
  sum(mul(y, v)).backward();
  std::vector<double> yv = y.to_vector<double>(), vv = v.to_vector<double>();
  double dot = 0;
  for (int i = 0; i < 3; ++i) dot += yv[i] * vv[i];
  std::vector<double> ref(3);
  for (int i = 0; i < 3; ++i) ref[i] = yv[i] * (vv[i] - dot);
  expect_close(x.grad(), ref, 1e-6);
}

TEST(Softmax, BadInput) {
  EXPECT_THROW(softmax(randn({2, 3}), 2), ShapeError);
  EXPECT_THROW(log_softmax(randn({2, 3}), -3), ShapeError);
  try {
    softmax(ones({2}, DType::int64), 0);
    FAIL() << "expected TypeError";
  } catch (const TypeError& e) {
    EXPECT_NE(std::string(e.what()).find("[softmax]"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("int64"), std::string::npos) << e.what();
  }
  EXPECT_THROW(softmax(Tensor(), 0), ValueError);
}

}  // namespace
}  // namespace hearth
