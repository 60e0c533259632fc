#include <cmath>
#include <string>

#include <gtest/gtest.h>

#include "hearth/autograd/gradcheck.h"
#include "hearth/ops/autocast.h"
#include "hearth/ops/elementwise.h"
#include "hearth/ops/factory.h"
#include "hearth/ops/linalg.h"
#include "hearth/ops/reduction.h"
#include "hearth/ops/view.h"

namespace hearth {
namespace {

// Row-major values of any tensor, in float64.
std::vector<double> values(const Tensor& t) { return t.contiguous().to_vector<double>(); }

// Naive float64 matmul over broadcast batches, written independently of the
// library: both operands already at least 2-D.
std::vector<double> ref_matmul(const Tensor& a, const Tensor& b, Shape* out_shape) {
  Shape ba(a.shape().begin(), a.shape().end() - 2), bb(b.shape().begin(), b.shape().end() - 2);
  const int64_t m = a.size(-2), k = a.size(-1), n = b.size(-1);
  const size_t nd = std::max(ba.size(), bb.size());
  while (ba.size() < nd) ba.insert(ba.begin(), 1);
  while (bb.size() < nd) bb.insert(bb.begin(), 1);
  Shape batch(nd);
  for (size_t d = 0; d < nd; ++d) batch[d] = std::max(ba[d], bb[d]);
  std::vector<double> av = values(a), bv = values(b);
  const int64_t nb = numel_of(batch);
  std::vector<double> out(static_cast<size_t>(nb * m * n), 0.0);
  for (int64_t i = 0; i < nb; ++i) {
    int64_t ia = 0, ib = 0, rest = i, sa = 1, sb = 1;
    for (int64_t d = static_cast<int64_t>(nd) - 1; d >= 0; --d) {
      const int64_t idx = rest % batch[d];
      rest /= batch[d];
      ia += (ba[d] == 1 ? 0 : idx) * sa;
      ib += (bb[d] == 1 ? 0 : idx) * sb;
      sa *= ba[d];
      sb *= bb[d];
    }
    for (int64_t r = 0; r < m; ++r)
      for (int64_t c = 0; c < n; ++c) {
        double s = 0;
        for (int64_t q = 0; q < k; ++q) s += av[(ia * m + r) * k + q] * bv[(ib * k + q) * n + c];
        out[(i * m + r) * n + c] = s;
      }
  }
  *out_shape = batch;
  out_shape->push_back(m);
  out_shape->push_back(n);
  return out;
}

void expect_close(const Tensor& t, const std::vector<double>& ref, double tol) {
  std::vector<double> v = values(t);
  ASSERT_EQ(v.size(), ref.size());
  for (size_t i = 0; i < v.size(); ++i) ASSERT_NEAR(v[i], ref[i], tol * (1 + std::abs(ref[i]))) << "element " << i;
}

void check_matmul(const Tensor& a, const Tensor& b, double tol = 1e-5) {
  Tensor a2 = a.dim() == 1 ? a.unsqueeze(0) : a;
  Tensor b2 = b.dim() == 1 ? b.unsqueeze(1) : b;
  Shape shape;
  std::vector<double> ref = ref_matmul(a2, b2, &shape);
  if (a.dim() == 1) shape.erase(shape.end() - 2);
  if (b.dim() == 1) shape.pop_back();
  Tensor y = matmul(a, b);
  EXPECT_EQ(y.shape(), shape) << a.shape_string() << " @ " << b.shape_string();
  expect_close(y, ref, tol);
}

void expect_message(const std::function<void()>& f, const std::vector<std::string>& parts) {
  try {
    f();
    FAIL() << "expected an exception";
  } catch (const Error& e) {
    for (const std::string& p : parts) EXPECT_NE(std::string(e.what()).find(p), std::string::npos) << e.what();
  }
}

TEST(Matmul, MatrixTimesMatrixMatchesReference) {
  for (auto [m, k, n] : std::vector<std::array<int64_t, 3>>{{1, 1, 1}, {3, 4, 5}, {1, 7, 3}, {6, 5, 1}, {33, 17, 9}})
    check_matmul(randn({m, k}), randn({k, n}));
}

TEST(Matmul, VectorCases) {
  Tensor v = randn({4}), w = randn({4});
  Tensor d = matmul(v, w);
  EXPECT_EQ(d.dim(), 0);
  check_matmul(v, w);
  check_matmul(randn({3, 4}), v);
  check_matmul(v, randn({4, 6}));
  check_matmul(randn({2, 3, 4}), v);  // batched matrix-vector
  check_matmul(v, randn({2, 4, 3}));  // vector times a batch
}

TEST(Matmul, BroadcastsBatchDims) {
  check_matmul(randn({2, 1, 3, 4}), randn({5, 4, 2}));
  check_matmul(randn({3, 4}), randn({2, 4, 5}));
  check_matmul(randn({2, 3, 4}), randn({4, 5}));  // folded into one GEMM
  check_matmul(randn({1, 3, 4}), randn({6, 4, 2}));
  check_matmul(randn({2, 3, 2, 4}), randn({2, 3, 4, 3}));
}

TEST(Matmul, NonContiguousOperands) {
  check_matmul(randn({5, 3}).t(), randn({6, 5}).t());                // both transposed
  check_matmul(slice(randn({4, 10}), 1, 0, 10, 2), randn({5, 3}));   // strided columns
  check_matmul(randn({4, 3, 2}).permute({2, 0, 1}), randn({3, 5}));  // permuted batch
  check_matmul(randn({3, 4}).expand({2, 3, 4}), randn({2, 4, 2}));   // stride-0 batch
  check_matmul(randn({1, 4}).expand({3, 4}), randn({4, 2}));         // stride-0 rows
  check_matmul(randn({2, 6, 5}).transpose(1, 2), slice(randn({2, 6, 6}), 2, 1, 6, 1));
}

TEST(Matmul, HalfTypesComputeInFloat) {
  for (DType dt : {DType::bfloat16, DType::float16}) {
    Tensor a = cast(randn({2, 5, 8}), dt), b = cast(randn({8, 3}), dt);
    Shape shape;
    std::vector<double> ref = ref_matmul(a, b, &shape);
    Tensor y = matmul(a, b);
    EXPECT_EQ(y.dtype(), dt);
    expect_close(y, ref, 2e-2);
    Tensor bt = cast(randn({2, 3, 8}), dt).transpose(1, 2);  // non-contiguous batch
    ref = ref_matmul(a, bt, &shape);
    expect_close(bmm(a, bt), ref, 2e-2);
  }
}

TEST(Matmul, Float64) { check_matmul(randn({3, 7}, DType::float64), randn({7, 2}, DType::float64), 1e-12); }

TEST(Matmul, EmptyOperands) {
  EXPECT_EQ(matmul(randn({0, 3}), randn({3, 4})).shape(), (Shape{0, 4}));
  Tensor z = matmul(randn({2, 0}), randn({0, 3}));
  EXPECT_EQ(z.shape(), (Shape{2, 3}));
  for (float v : z.to_vector<float>()) EXPECT_EQ(v, 0.f);
  EXPECT_EQ(matmul(randn({0, 2, 3}), randn({3, 4})).shape(), (Shape{0, 2, 4}));
}

TEST(Matmul, MmBmmAndMethod) {
  Tensor a = randn({3, 4}), b = randn({4, 2});
  Shape s;
  expect_close(mm(a, b), ref_matmul(a, b, &s), 1e-5);
  expect_close(a.matmul(b), ref_matmul(a, b, &s), 1e-5);
  Tensor x = randn({3, 2, 5}), y = randn({3, 5, 4});
  expect_close(bmm(x, y), ref_matmul(x, y, &s), 1e-5);
  EXPECT_EQ(bmm(x, y).shape(), (Shape{3, 2, 4}));
}

TEST(Matmul, LinearMatchesReference) {
  Tensor x = randn({2, 3, 5}), w = randn({4, 5}), bias = randn({4});
  Shape s;
  std::vector<double> ref = ref_matmul(x, w.t(), &s);
  expect_close(linear(x, w), ref, 1e-5);
  std::vector<double> bv = values(bias);
  for (size_t i = 0; i < ref.size(); ++i) ref[i] += bv[i % 4];
  Tensor y = linear(x, w, bias);
  EXPECT_EQ(y.shape(), (Shape{2, 3, 4}));
  expect_close(y, ref, 1e-5);
  EXPECT_EQ(linear(randn({5}), w, bias).shape(), (Shape{4}));
}

GradcheckResult check_grad(std::function<Tensor(const std::vector<Tensor>&)> f, std::vector<Tensor> in) {
  for (Tensor& t : in) t.requires_grad_();
  return gradcheck(f, in);
}

auto mm_fn = [](const std::vector<Tensor>& in) { return matmul(in[0], in[1]); };

TEST(Matmul, GradcheckContiguous) {
  const DType f64 = DType::float64;
  auto r = check_grad(mm_fn, {randn({3, 4}, f64), randn({4, 2}, f64)});
  EXPECT_TRUE(r.ok) << r.message;
  r = check_grad(mm_fn, {randn({2, 1, 3, 4}, f64), randn({3, 4, 2}, f64)});
  EXPECT_TRUE(r.ok) << r.message;
  r = check_grad(mm_fn, {randn({2, 3, 4}, f64), randn({4, 2}, f64)});
  EXPECT_TRUE(r.ok) << r.message;
  r = check_grad(mm_fn, {randn({4}, f64), randn({4}, f64)});
  EXPECT_TRUE(r.ok) << r.message;
  r = check_grad(mm_fn, {randn({4}, f64), randn({2, 4, 3}, f64)});
  EXPECT_TRUE(r.ok) << r.message;
  r = check_grad([](const std::vector<Tensor>& in) { return bmm(in[0], in[1]); },
                 {randn({2, 3, 4}, f64), randn({2, 4, 2}, f64)});
  EXPECT_TRUE(r.ok) << r.message;
}

TEST(Matmul, GradcheckNonContiguous) {
  const DType f64 = DType::float64;
  auto r = check_grad(mm_fn, {randn({4, 3}, f64).t(), slice(randn({4, 6}, f64), 1, 0, 6, 3)});
  EXPECT_TRUE(r.ok) << r.message;
  r = check_grad(mm_fn, {randn({4, 2, 3}, f64).permute({1, 2, 0}), randn({3, 4, 2}, f64).permute({2, 1, 0})});
  EXPECT_TRUE(r.ok) << r.message;
}

// Sets the bias-gradient switch for a scope.
class FusedBiasGrad {
 public:
  explicit FusedBiasGrad(bool on) : before_(fused_bias_grad_enabled()) { set_fused_bias_grad_enabled(on); }
  ~FusedBiasGrad() { set_fused_bias_grad_enabled(before_); }

 private:
  bool before_;
};

TEST(Matmul, GradcheckLinear) {
  const DType f64 = DType::float64;
  FusedBiasGrad fused(true);
  const uint64_t before = fused_bias_grad_count();
  auto r = check_grad([](const std::vector<Tensor>& in) { return linear(in[0], in[1], in[2]); },
                      {randn({2, 3, 4}, f64), randn({5, 4}, f64), randn({5}, f64)});
  EXPECT_TRUE(r.ok) << r.message;
  r = check_grad([](const std::vector<Tensor>& in) { return linear(in[0], in[1]); },
                 {randn({4, 3}, f64).t(), randn({4, 3}, f64).t()});
  EXPECT_TRUE(r.ok) << r.message;
  // The fused bias path with a transposed input and a 1-D input (which takes the unfused path).
  r = check_grad([](const std::vector<Tensor>& in) { return linear(in[0], in[1], in[2]); },
                 {randn({4, 3}, f64).t(), randn({5, 4}, f64), randn({5}, f64)});
  EXPECT_TRUE(r.ok) << r.message;
  r = check_grad([](const std::vector<Tensor>& in) { return linear(in[0], in[1], in[2]); },
                 {randn({4}, f64), randn({5, 4}, f64), randn({5}, f64)});
  EXPECT_TRUE(r.ok) << r.message;
  // The bias gradients above came from the weight gradient's product.
  EXPECT_GT(fused_bias_grad_count(), before);
}

// The weight and bias gradients of linear from one product (the bias gradient
// as the product's a_sums) against the two products they replace, and against
// a float64 reference: every floating dtype, a row, odd sizes, a 3-D input.
TEST(Matmul, LinearBiasGradientInTheWeightGradientProduct) {
  for (DType dt : {DType::float32, DType::float64, DType::bfloat16, DType::float16}) {
    for (Shape xs : {Shape{1, 5}, Shape{7, 5}, Shape{3, 11, 64}}) {
      for (int64_t n : {1, 33}) {
        const int64_t k = xs.back(), rows = numel_of(xs) / k;
        const Tensor x = cast(randn(xs), dt), w0 = cast(randn({n, k}), dt), b0 = cast(randn({n}), dt);
        Shape ys = xs;
        ys.back() = n;
        const Tensor g = cast(randn(ys), dt);
        auto grads = [&](bool fused) {
          FusedBiasGrad mode(fused);
          Tensor w = w0.clone().requires_grad_(), b = b0.clone().requires_grad_();
          linear(x, w, b).backward(g);
          return std::pair<Tensor, Tensor>{w.grad(), b.grad()};
        };
        const uint64_t before = fused_bias_grad_count();
        const auto [gw, gb] = grads(true);
        EXPECT_EQ(fused_bias_grad_count(), before + 1) << dtype_name(dt);
        const auto [gw_old, gb_old] = grads(false);
        EXPECT_EQ(fused_bias_grad_count(), before + 1);
        ASSERT_EQ(gb.dtype(), dt);
        ASSERT_EQ(gb.shape(), (Shape{n}));
        ASSERT_EQ(gw.shape(), (Shape{n, k}));
        EXPECT_TRUE(gw.is_contiguous());
        // Both paths accumulate in float (double for float64) and round once.
        const double tol = dt == DType::float64 ? 1e-12 : dt == DType::float32 ? 1e-5 : 1e-2;
        expect_close(gw, values(gw_old), tol);
        expect_close(gb, values(gb_old), tol);
        // The float64 reference of the inputs as given (rounded to dt).
        std::vector<double> gv = values(g), ref(static_cast<size_t>(n), 0.0);
        for (int64_t r = 0; r < rows; ++r)
          for (int64_t j = 0; j < n; ++j) ref[j] += gv[r * n + j];
        expect_close(gb, ref, dt == DType::float64 ? 1e-12 : dt == DType::float32 ? 1e-5 : 1e-2);
        Shape s;
        expect_close(gw, ref_matmul(reshape(g, {rows, n}).t(), reshape(x, {rows, k}), &s),
                     dt == DType::float64 ? 1e-12 : dt == DType::float32 ? 1e-5 : 1e-2);
      }
    }
  }
}

// Only the bias needs a gradient (a frozen weight): no weight product to ride,
// so the bias gradient is a product of its own, and still the sum of g's rows.
TEST(Matmul, LinearBiasGradientWithoutWeightGradient) {
  FusedBiasGrad fused(true);
  const Tensor x = randn({6, 4}, DType::float64), w = randn({3, 4}, DType::float64);
  Tensor b = randn({3}, DType::float64).requires_grad_();
  const Tensor g = randn({6, 3}, DType::float64);
  const uint64_t before = fused_bias_grad_count();
  linear(x, w, b).backward(g);
  EXPECT_EQ(fused_bias_grad_count(), before);
  expect_close(b.grad(), values(sum(g, {0})), 1e-12);
}

// Under autocast the bias is cast to bfloat16 for the product: its gradient
// comes out of the product in bfloat16 and reaches the float32 leaf through
// the cast's backward, as with the bias gradient as a product of its own.
TEST(Matmul, LinearBiasGradientUnderAutocast) {
  const Tensor x = randn({9, 16}), g = randn({9, 8});
  const Tensor w0 = randn({8, 16}), b0 = randn({8});
  auto grads = [&](bool fused) {
    FusedBiasGrad mode(fused);
    Tensor w = w0.clone().requires_grad_(), b = b0.clone().requires_grad_();
    Tensor y;
    {
      AutocastGuard autocast(kCpu, DType::bfloat16);
      y = linear(x, w, b);
    }
    EXPECT_EQ(y.dtype(), DType::bfloat16);
    y.backward(cast(g, DType::bfloat16));
    return std::pair<Tensor, Tensor>{w.grad(), b.grad()};
  };
  const uint64_t before = fused_bias_grad_count();
  const auto [gw, gb] = grads(true);
  EXPECT_EQ(fused_bias_grad_count(), before + 1);
  const auto [gw_old, gb_old] = grads(false);
  EXPECT_EQ(gb.dtype(), DType::float32);
  EXPECT_EQ(gw.dtype(), DType::float32);
  expect_close(gb, values(gb_old), 1e-2);
  expect_close(gw, values(gw_old), 1e-2);
}

TEST(Matmul, LinearBiasIsAddedOnceInHalfTypes) {
  for (DType dt : {DType::float32, DType::bfloat16, DType::float16}) {
    Tensor x = randn({3, 7}), w = randn({5, 7}), b = randn({5});
    Tensor ref = add(matmul(x, transpose(w, 0, 1)), b);
    Tensor y = linear(cast(x, dt), cast(w, dt), cast(b, dt));
    EXPECT_EQ(y.dtype(), dt);
    expect_close(cast(y, DType::float32), values(ref), dt == DType::float32 ? 1e-5 : 3e-2);
  }
}

TEST(Matmul, GradOfBroadcastOperandIsSummed) {
  Tensor a = ones({3, 2, 2}).requires_grad_();
  Tensor b = ones({2, 4}).requires_grad_();
  sum(matmul(a, b)).backward();
  for (float v : b.grad().to_vector<float>()) EXPECT_FLOAT_EQ(v, 6.f);  // 3 batches x 2 rows
  EXPECT_EQ(b.grad().shape(), (Shape{2, 4}));
  for (float v : a.grad().to_vector<float>()) EXPECT_FLOAT_EQ(v, 4.f);
}

TEST(Matmul, LinearWeightGradientMatchesReference) {
  // x @ w^T multiplies by a transposed view, whose gradient is produced in the
  // transposed layout (g^T @ x) and must come out as w's [out, in] gradient.
  Tensor x = randn({3, 4}, DType::float64), w = randn({5, 4}, DType::float64).requires_grad_();
  Tensor g = randn({3, 5}, DType::float64);
  linear(x, w).backward(g);
  EXPECT_TRUE(w.grad().is_contiguous());
  Shape s;
  expect_close(w.grad(), ref_matmul(g.t(), x, &s), 1e-12);
}

TEST(Matmul, BadInputs) {
  expect_message([] { matmul(randn({2, 3}), randn({4, 5})); }, {"[matmul]", "[2, 3]", "[4, 5]", "3", "4"});
  EXPECT_THROW(matmul(randn({2, 3}), randn({4, 5})), ShapeError);
  EXPECT_THROW(matmul(scalar_tensor(1.0, DType::float32), randn({2})), ShapeError);
  EXPECT_THROW(matmul(randn({2, 3}), randn({3, 2}, DType::float64)), TypeError);
  EXPECT_THROW(matmul(ones({2, 2}, DType::int64), ones({2, 2}, DType::int64)), TypeError);
  EXPECT_THROW(matmul(randn({2, 2, 3}), randn({3, 3, 2})), ShapeError);  // batch 2 vs 3
  EXPECT_THROW(mm(randn({2, 2, 3}), randn({3, 2})), ShapeError);
  expect_message([] { bmm(randn({2, 2, 3}), randn({3, 3, 2})); }, {"[bmm]", "batch"});
  expect_message([] { linear(randn({2, 3}), randn({4, 5})); }, {"[linear]", "3", "[4, 5]"});
  EXPECT_THROW(linear(randn({2, 5}), randn({4, 5}), randn({3})), ShapeError);
}

}  // namespace
}  // namespace hearth
