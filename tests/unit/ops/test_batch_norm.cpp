#include <cmath>
#include <cstdlib>
#include <vector>

#include <gtest/gtest.h>

#include "hearth/autograd/gradcheck.h"
#include "hearth/dispatch/dispatch.h"
#include "hearth/ops/elementwise.h"
#include "hearth/ops/factory.h"
#include "hearth/ops/nn_functional.h"
#include "hearth/ops/reduction.h"
#include "hearth/ops/view.h"
#include "tests/support/test_device.h"

namespace hearth {
namespace {

struct ChannelStats {
  std::vector<double> mean, biased_var, unbiased_var;
};

// Per-channel statistics of a [N, C, S...] tensor, in float64.
ChannelStats stats_of(const Tensor& x) {
  std::vector<double> v = contiguous(x).to_vector<double>();
  const int64_t N = x.size(0), C = x.size(1), S = x.numel() / (N * C);
  ChannelStats st;
  for (int64_t c = 0; c < C; ++c) {
    double s = 0, ss = 0;
    for (int64_t n = 0; n < N; ++n)
      for (int64_t i = 0; i < S; ++i) s += v[(n * C + c) * S + i];
    const double m = s / (N * S);
    for (int64_t n = 0; n < N; ++n)
      for (int64_t i = 0; i < S; ++i) ss += (v[(n * C + c) * S + i] - m) * (v[(n * C + c) * S + i] - m);
    st.mean.push_back(m);
    st.biased_var.push_back(ss / (N * S));
    st.unbiased_var.push_back(ss / (N * S - 1));
  }
  return st;
}

std::vector<double> normalise_ref(const Tensor& x, const std::vector<double>& mean, const std::vector<double>& var,
                                  const std::vector<double>& w, const std::vector<double>& b, double eps) {
  std::vector<double> v = contiguous(x).to_vector<double>();
  const int64_t N = x.size(0), C = x.size(1), S = x.numel() / (N * C);
  for (int64_t n = 0; n < N; ++n)
    for (int64_t c = 0; c < C; ++c)
      for (int64_t i = 0; i < S; ++i) {
        double& e = v[(n * C + c) * S + i];
        e = (e - mean[c]) / std::sqrt(var[c] + eps) * (w.empty() ? 1.0 : w[c]) + (b.empty() ? 0.0 : b[c]);
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

TEST(BatchNorm, TrainingNormalisesWithBatchStatistics4D) {
  Tensor x = add(mul(randn({3, 4, 2, 5}, DType::float64), 2.0), 1.5);
  Tensor w = randn({4}, DType::float64), b = randn({4}, DType::float64);
  ChannelStats st = stats_of(x);
  Tensor y = batch_norm(x, Tensor(), Tensor(), w, b, true, 0.1, 1e-5);
  EXPECT_EQ(y.shape(), x.shape());
  expect_close(y, normalise_ref(x, st.mean, st.biased_var, w.to_vector<double>(), b.to_vector<double>(), 1e-5), 1e-10);
}

TEST(BatchNorm, HandCheckedTwoDimensional) {
  // One channel holding {1, 3}: mean 2, biased var 1, so y = (x - 2) / sqrt(1 + eps).
  Tensor x = tensor(std::vector<double>{1, 10, 3, 20}, {2, 2});
  Tensor rm = zeros({2}, DType::float64), rv = ones({2}, DType::float64);
  Tensor y = batch_norm(x, rm, rv, Tensor(), Tensor(), true, 0.1, 0.0 + 1e-5);
  const double k = 1.0 / std::sqrt(1.0 + 1e-5), k2 = 1.0 / std::sqrt(25.0 + 1e-5);
  expect_close(y, {-k, -5 * k2, k, 5 * k2}, 1e-12);
  // running = 0.9 * running + 0.1 * batch; the variance is unbiased (n - 1 = 1).
  expect_close(rm, {0.2, 1.5}, 1e-12);
  expect_close(rv, {0.9 + 0.1 * 2.0, 0.9 + 0.1 * 50.0}, 1e-12);
}

TEST(BatchNorm, RunningStatisticsUpdateInPlace) {
  Tensor x = randn({4, 3, 6}, DType::float64);
  Tensor rm = tensor(std::vector<double>{0.5, -1, 2}), rv = tensor(std::vector<double>{1, 2, 0.5});
  const uint32_t version = rm.version();
  ChannelStats st = stats_of(x);
  batch_norm(x, rm, rv, Tensor(), Tensor(), true, 0.3, 1e-5);
  EXPECT_GT(rm.version(), version);
  std::vector<double> m0{0.5, -1, 2}, v0{1, 2, 0.5}, em, ev;
  for (int c = 0; c < 3; ++c) {
    em.push_back(0.7 * m0[c] + 0.3 * st.mean[c]);
    ev.push_back(0.7 * v0[c] + 0.3 * st.unbiased_var[c]);
  }
  expect_close(rm, em, 1e-12);
  expect_close(rv, ev, 1e-12);
}

TEST(BatchNorm, StridedRunningStatisticsAreWrittenBack) {
  Tensor storage = zeros({6}, DType::float64);
  Tensor rm = slice(storage, 0, 0, 6, 2);  // elements 0, 2, 4
  Tensor rv = ones({3}, DType::float64);
  Tensor x = randn({5, 3}, DType::float64);
  ChannelStats st = stats_of(x);
  batch_norm(x, rm, rv, Tensor(), Tensor(), true, 1.0, 1e-5);
  std::vector<double> s = storage.to_vector<double>();
  for (int c = 0; c < 3; ++c) {
    EXPECT_NEAR(s[2 * c], st.mean[c], 1e-12);
    EXPECT_EQ(s[2 * c + 1], 0.0);
  }
}

TEST(BatchNorm, EvalUsesRunningStatisticsAndLeavesThemAlone) {
  Tensor x = randn({2, 3, 4}, DType::float64);
  std::vector<double> m{0.1, -0.2, 0.3}, v{1.5, 0.5, 2.0};
  Tensor rm = tensor(m), rv = tensor(v);
  Tensor w = tensor(std::vector<double>{1, 2, 3}), b = tensor(std::vector<double>{0, -1, 1});
  Tensor y = batch_norm(x, rm, rv, w, b, false, 0.1, 1e-3);
  expect_close(y, normalise_ref(x, m, v, {1, 2, 3}, {0, -1, 1}, 1e-3), 1e-12);
  EXPECT_EQ(rm.to_vector<double>(), m);
  EXPECT_EQ(rv.to_vector<double>(), v);
}

TEST(BatchNorm, NonContiguousInput) {
  Tensor base = randn({3, 5, 4}, DType::float64);
  Tensor x = permute(base, {2, 1, 0});  // [4, 5, 3], strided
  ASSERT_FALSE(x.is_contiguous());
  Tensor a = batch_norm(x, Tensor(), Tensor(), Tensor(), Tensor(), true);
  Tensor b = batch_norm(contiguous(x), Tensor(), Tensor(), Tensor(), Tensor(), true);
  EXPECT_EQ(a.to_vector<double>(), b.to_vector<double>());
}

TEST(BatchNorm, HalfInputsWithFloat32Parameters) {
  Tensor x64 = randn({4, 3, 5}, DType::float64);
  for (DType dt : {DType::bfloat16, DType::float16, DType::float32}) {
    Tensor x = cast(x64, dt);
    Tensor rm = zeros({3}), rv = ones({3});
    Tensor w = ones({3}), b = zeros({3});
    Tensor y = batch_norm(x, rm, rv, w, b, true);
    EXPECT_EQ(y.dtype(), dt);
    ChannelStats st = stats_of(cast(x, DType::float64));
    const double tol = dt == DType::float32 ? 1e-5 : (dt == DType::bfloat16 ? 3e-2 : 5e-3);
    expect_close(y, normalise_ref(cast(x, DType::float64), st.mean, st.biased_var, {}, {}, 1e-5), tol);
    std::vector<double> em;
    for (double m : st.mean) em.push_back(0.1 * m);
    expect_close(rm, em, 1e-6);
  }
}

TEST(BatchNorm, BackwardMatchesClosedFormForBias) {
  Tensor x = randn({2, 3, 4}, DType::float64);
  Tensor b = zeros({3}, DType::float64).requires_grad_();
  Tensor w = ones({3}, DType::float64).requires_grad_();
  sum(batch_norm(x, Tensor(), Tensor(), w, b, true)).backward();
  expect_close(b.grad(), {8, 8, 8}, 1e-12);  // d sum / d bias = N * S
  expect_close(w.grad(), {0, 0, 0}, 1e-9);   // sum of xhat is zero
}

TEST(BatchNorm, GradcheckTraining) {
  Tensor x = randn({3, 2, 2, 2}, DType::float64).requires_grad_();
  Tensor w = randn({2}, DType::float64).requires_grad_();
  Tensor b = randn({2}, DType::float64).requires_grad_();
  auto r =
      gradcheck([](const std::vector<Tensor>& in) { return batch_norm(in[0], Tensor(), Tensor(), in[1], in[2], true); },
                {x, w, b});
  EXPECT_TRUE(r.ok) << r.message;
  Tensor x2 = randn({5, 3}, DType::float64).requires_grad_();
  auto r2 = gradcheck(
      [](const std::vector<Tensor>& in) { return batch_norm(in[0], Tensor(), Tensor(), Tensor(), Tensor(), true); },
      {x2});
  EXPECT_TRUE(r2.ok) << r2.message;
}

TEST(BatchNorm, GradcheckNonContiguous) {
  Tensor x = transpose(randn({4, 5}, DType::float64), 0, 1);  // [5, 4], strided
  x.requires_grad_();
  Tensor w = randn({4}, DType::float64).requires_grad_();
  Tensor b = randn({4}, DType::float64).requires_grad_();
  auto r =
      gradcheck([](const std::vector<Tensor>& in) { return batch_norm(in[0], Tensor(), Tensor(), in[1], in[2], true); },
                {x, w, b});
  EXPECT_TRUE(r.ok) << r.message;
}

TEST(BatchNorm, GradcheckEval) {
  Tensor x = randn({2, 3, 3}, DType::float64).requires_grad_();
  Tensor w = randn({3}, DType::float64).requires_grad_();
  Tensor b = randn({3}, DType::float64).requires_grad_();
  Tensor rm = randn({3}, DType::float64), rv = add(rand({3}, DType::float64), 0.5);
  auto r = gradcheck([&](const std::vector<Tensor>& in) { return batch_norm(in[0], rm, rv, in[1], in[2], false); },
                     {x, w, b});
  EXPECT_TRUE(r.ok) << r.message;
}

TEST(BatchNorm, LargeInputMatchesReference) {
  // Big enough to split channels across threads.
  Tensor x = randn({64, 4, 256}, DType::float64).requires_grad_();
  Tensor b = zeros({4}, DType::float64).requires_grad_();
  ChannelStats st = stats_of(x.detach());
  Tensor y = batch_norm(x, Tensor(), Tensor(), Tensor(), b, true);
  expect_close(y, normalise_ref(x.detach(), st.mean, st.biased_var, {}, {}, 1e-5), 1e-10);
  sum(y).backward();
  expect_close(b.grad(), std::vector<double>(4, 64.0 * 256), 1e-9);
  expect_close(x.grad(), std::vector<double>(x.numel(), 0.0), 1e-9);  // sum(y) does not depend on x
}

TEST(BatchNorm, EmptyBatchInEval) {
  Tensor y = batch_norm(zeros({0, 3}), zeros({3}), ones({3}), Tensor(), Tensor(), false);
  EXPECT_EQ(y.shape(), (Shape{0, 3}));
}

TEST(BatchNorm, BadInput) {
  Tensor rm = zeros({3}), rv = ones({3});
  EXPECT_THROW(batch_norm(randn({3}), rm, rv, Tensor(), Tensor(), true), ShapeError);
  try {
    batch_norm(randn({2, 3}), rm, rv, ones({4}), Tensor(), true);
    FAIL() << "expected ShapeError";
  } catch (const ShapeError& e) {
    const std::string m = e.what();
    EXPECT_NE(m.find("[batch_norm]"), std::string::npos) << m;
    EXPECT_NE(m.find("weight"), std::string::npos) << m;
    EXPECT_NE(m.find("[3]"), std::string::npos) << m;
    EXPECT_NE(m.find("[4]"), std::string::npos) << m;
  }
  EXPECT_THROW(batch_norm(randn({2, 3}), Tensor(), Tensor(), Tensor(), Tensor(), false), ValueError);
  EXPECT_THROW(batch_norm(randn({1, 3}), rm, rv, Tensor(), Tensor(), true), ValueError);
  EXPECT_THROW(batch_norm(ones({2, 3}, DType::int64), rm, rv, Tensor(), Tensor(), true), TypeError);
  EXPECT_THROW(batch_norm(randn({2, 3}), zeros({3}, DType::float64), rv, Tensor(), Tensor(), true), TypeError);
}

// ---- batch_norm_relu: relu(batch_norm(x)) in the batch norm's kernels ----

struct BnReluResult {
  std::vector<double> y, gx, gw, gb, rm, rv;
};

// Forward and backward (upstream gradient v) of one of the two spellings, on
// copies of the leaves, in the given memory format.
BnReluResult run_bn_relu(bool fused, const Tensor& x0, const Tensor& w0, const Tensor& b0, const Tensor& v,
                         bool training, MemoryFormat fmt) {
  Tensor x = contiguous(x0.detach().clone(), fmt).requires_grad_();
  Tensor w = w0.detach().clone().requires_grad_(), b = b0.detach().clone().requires_grad_();
  Tensor rm = full({x0.size(1)}, 0.25, w0.dtype()), rv = full({x0.size(1)}, 1.5, w0.dtype());
  Tensor y = fused ? batch_norm_relu(x, rm, rv, w, b, training, 0.2) : relu(batch_norm(x, rm, rv, w, b, training, 0.2));
  EXPECT_TRUE(x0.dim() != 4 || y.is_contiguous(fmt));
  sum(mul(y, v)).backward();
  return {y.to_vector<double>(),  x.grad().to_vector<double>(), w.grad().to_vector<double>(),
          b.grad().to_vector<double>(), rm.to_vector<double>(), rv.to_vector<double>()};
}

// The fused op is the composition, bit for bit: the same rounding forward, the
// same mask (the saved output, positive) backward.
TEST(BatchNormRelu, EqualsReluOfBatchNormExactly) {
  for (DType dt : {DType::float32, DType::bfloat16, DType::float64})
    for (bool training : {true, false})
      for (MemoryFormat fmt : {MemoryFormat::contiguous, MemoryFormat::channels_last}) {
        Tensor x = cast(randn({3, 4, 5, 3}), dt), v = cast(randn({3, 4, 5, 3}), dt);
        Tensor w = cast(randn({4}), dt), b = cast(randn({4}), dt);
        const BnReluResult f = run_bn_relu(true, x, w, b, v, training, fmt);
        const BnReluResult u = run_bn_relu(false, x, w, b, v, training, fmt);
        const std::string what = std::string(dtype_name(dt)) + (training ? " training" : " eval") +
                                 (fmt == MemoryFormat::channels_last ? " NHWC" : " NCHW");
        EXPECT_EQ(f.y, u.y) << what;
        EXPECT_EQ(f.rm, u.rm) << what;
        EXPECT_EQ(f.rv, u.rv) << what;
        if (dt != DType::float64) {
          EXPECT_EQ(f.gx, u.gx) << what;
          EXPECT_EQ(f.gw, u.gw) << what;
          EXPECT_EQ(f.gb, u.gb) << what;
        } else {
          // The float64 kernel's sums may contract into FMAs differently in the
          // two code paths (the build targets x86-64-v3): last-bit differences.
          for (const auto& [a, b] : {std::pair{&f.gx, &u.gx}, std::pair{&f.gw, &u.gw}, std::pair{&f.gb, &u.gb}}) {
            ASSERT_EQ(a->size(), b->size());
            for (size_t i = 0; i < a->size(); ++i) EXPECT_NEAR((*a)[i], (*b)[i], 1e-12 * (1 + std::abs((*b)[i]))) << what;
          }
        }
        // Both halves of the mask occur, so the test can tell a missing ReLU.
        int64_t zeros = 0;
        for (double e : f.y) zeros += e == 0.0;
        EXPECT_GT(zeros, 0) << what;
        EXPECT_LT(zeros, static_cast<int64_t>(f.y.size())) << what;
      }
}

TEST(BatchNormRelu, OutputIsNonNegativeAndGradientVanishesWhereClipped) {
  Tensor x = randn({6, 3}).requires_grad_();
  Tensor y = batch_norm_relu(x, Tensor(), Tensor(), Tensor(), Tensor(), true);
  Tensor plain = batch_norm(x.detach(), Tensor(), Tensor(), Tensor(), Tensor(), true);
  sum(y).backward();
  const std::vector<double> yv = y.to_vector<double>(), pv = plain.to_vector<double>(), g = x.grad().to_vector<double>();
  for (size_t i = 0; i < yv.size(); ++i) EXPECT_EQ(yv[i], std::max(pv[i], 0.0)) << i;
  // Sum of the positive part's gradient: nonzero somewhere, so the mask is used.
  double total = 0;
  for (double e : g) total += std::abs(e);
  EXPECT_GT(total, 0);
}

TEST(BatchNormRelu, GradcheckTrainingAndEval) {
  Tensor x = randn({3, 2, 3, 2}, DType::float64).requires_grad_();
  Tensor w = randn({2}, DType::float64).requires_grad_();
  Tensor b = randn({2}, DType::float64).requires_grad_();
  auto r = gradcheck(
      [](const std::vector<Tensor>& in) { return batch_norm_relu(in[0], Tensor(), Tensor(), in[1], in[2], true); },
      {x, w, b});
  EXPECT_TRUE(r.ok) << r.message;
  Tensor rm = randn({2}, DType::float64), rv = add(rand({2}, DType::float64), 0.5);
  auto r2 = gradcheck([&](const std::vector<Tensor>& in) { return batch_norm_relu(in[0], rm, rv, in[1], in[2], false); },
                      {x, w, b});
  EXPECT_TRUE(r2.ok) << r2.message;
  Tensor xl = contiguous(randn({2, 3, 2, 3}, DType::float64), MemoryFormat::channels_last).requires_grad_();
  auto r3 = gradcheck(
      [](const std::vector<Tensor>& in) { return batch_norm_relu(in[0], Tensor(), Tensor(), Tensor(), Tensor(), true); },
      {xl});
  EXPECT_TRUE(r3.ok) << r3.message;
}

TEST(BatchNormRelu, ErrorsNameTheOp) {
  try {
    batch_norm_relu(randn({2, 3}), Tensor(), Tensor(), randn({4}), Tensor(), true);
    FAIL() << "expected a ShapeError";
  } catch (const ShapeError& e) {
    EXPECT_NE(std::string(e.what()).find("[batch_norm_relu]"), std::string::npos) << e.what();
  }
}

// ---- batch_norm_add_relu: relu(batch_norm(x) + residual), ResNet's block tail ----

struct BnAddReluResult {
  std::vector<double> y, gx, gr, gw, gb, rm, rv;
  bool y_keeps_format = false, gr_keeps_format = false;
};

// Forward and backward (upstream gradient v) of the fused op or the
// composition, on copies of the leaves: x in x_fmt, the residual in r_fmt.
BnAddReluResult run_bn_add_relu(bool fused, const Tensor& x0, const Tensor& r0, const Tensor& w0, const Tensor& b0,
                                const Tensor& v, bool training, MemoryFormat x_fmt, MemoryFormat r_fmt) {
  Tensor x = contiguous(x0.detach().clone(), x_fmt).requires_grad_();
  Tensor r = contiguous(r0.detach().clone(), r_fmt).requires_grad_();
  Tensor w = w0.detach().clone().requires_grad_(), b = b0.detach().clone().requires_grad_();
  Tensor rm = full({x0.size(1)}, 0.25, w0.dtype()), rv = full({x0.size(1)}, 1.5, w0.dtype());
  Tensor y = fused ? batch_norm_add_relu(x, r, rm, rv, w, b, training, 0.2)
                   : relu(add(batch_norm(x, rm, rv, w, b, training, 0.2), r));
  sum(mul(y, v)).backward();
  BnAddReluResult out{y.to_vector<double>(),        x.grad().to_vector<double>(), r.grad().to_vector<double>(),
                      w.grad().to_vector<double>(), b.grad().to_vector<double>(), rm.to_vector<double>(),
                      rv.to_vector<double>()};
  out.y_keeps_format = y.is_contiguous(x_fmt);
  out.gr_keeps_format = r.grad().is_contiguous(r_fmt);
  return out;
}

// Exact for float32 and the 16-bit types (the same roundings forward, the same
// mask backward); float64 sums may contract into FMAs differently in the two
// code paths (see BatchNormRelu.EqualsReluOfBatchNormExactly).
void expect_same_values(const std::vector<double>& a, const std::vector<double>& b, DType dt, const std::string& what) {
  ASSERT_EQ(a.size(), b.size()) << what;
  for (size_t i = 0; i < a.size(); ++i) {
    if (dt == DType::float64)
      EXPECT_NEAR(a[i], b[i], 1e-12 * (1 + std::abs(b[i]))) << what << " element " << i;
    else
      EXPECT_EQ(a[i], b[i]) << what << " element " << i;
  }
}

TEST(BatchNormAddRelu, EqualsReluOfBatchNormPlusResidualExactly) {
  const MemoryFormat nchw = MemoryFormat::contiguous, nhwc = MemoryFormat::channels_last;
  for (DType dt : {DType::float32, DType::bfloat16, DType::float64})
    for (bool training : {true, false})
      for (auto [xf, rf] : {std::pair{nchw, nchw}, std::pair{nhwc, nhwc}, std::pair{nhwc, nchw}}) {
        Tensor x = cast(randn({3, 4, 5, 3}), dt), r = cast(randn({3, 4, 5, 3}), dt), v = cast(randn({3, 4, 5, 3}), dt);
        Tensor w = cast(randn({4}), dt), b = cast(randn({4}), dt);
        const BnAddReluResult f = run_bn_add_relu(true, x, r, w, b, v, training, xf, rf);
        const BnAddReluResult u = run_bn_add_relu(false, x, r, w, b, v, training, xf, rf);
        const std::string what = std::string(dtype_name(dt)) + (training ? " training" : " eval") +
                                 (xf == nhwc ? " x NHWC" : " x NCHW") +
                                 (rf == nhwc ? " residual NHWC" : " residual NCHW");
        EXPECT_EQ(f.y, u.y) << what;
        EXPECT_EQ(f.gr, u.gr) << what;
        EXPECT_EQ(f.rm, u.rm) << what;
        EXPECT_EQ(f.rv, u.rv) << what;
        expect_same_values(f.gx, u.gx, dt, what + " grad x");
        expect_same_values(f.gw, u.gw, dt, what + " grad weight");
        expect_same_values(f.gb, u.gb, dt, what + " grad bias");
        EXPECT_TRUE(f.y_keeps_format) << what;
        EXPECT_TRUE(f.gr_keeps_format) << what;
        // Both halves of the mask occur, so the test can tell a missing ReLU or add.
        int64_t zeros = 0;
        for (double e : f.y) zeros += e == 0.0;
        EXPECT_GT(zeros, 0) << what;
        EXPECT_LT(zeros, static_cast<int64_t>(f.y.size())) << what;
      }
}

TEST(BatchNormAddRelu, ResidualGradientIsTheMaskedUpstreamGradient) {
  Tensor x = randn({5, 3, 4}), r = randn({5, 3, 4}).requires_grad_(), v = randn({5, 3, 4});
  // Only the residual needs a gradient: the backward still writes it.
  Tensor y = batch_norm_add_relu(x, r, Tensor(), Tensor(), Tensor(), Tensor(), true);
  sum(mul(y, v)).backward();
  const std::vector<double> yv = y.to_vector<double>(), vv = v.to_vector<double>(), g = r.grad().to_vector<double>();
  const std::vector<double> pre =
      add(batch_norm(x, Tensor(), Tensor(), Tensor(), Tensor(), true), r.detach()).to_vector<double>();
  for (size_t i = 0; i < yv.size(); ++i) {
    EXPECT_EQ(yv[i], std::max(pre[i], 0.0)) << i;
    EXPECT_EQ(g[i], yv[i] > 0 ? vv[i] : 0.0) << i;
  }
}

TEST(BatchNormAddRelu, ResidualOfAnotherDtypeGetsItsGradientInItsDtype) {
  Tensor x = cast(randn({4, 3, 2, 2}), DType::bfloat16).requires_grad_();
  Tensor r = randn({4, 3, 2, 2}).requires_grad_();
  Tensor y = batch_norm_add_relu(x, r, Tensor(), Tensor(), Tensor(), Tensor(), true);
  EXPECT_EQ(y.dtype(), DType::bfloat16);
  Tensor v = cast(randn({4, 3, 2, 2}), DType::bfloat16);
  sum(mul(y, v)).backward();
  ASSERT_EQ(r.grad().dtype(), DType::float32);
  const std::vector<double> yv = y.to_vector<double>(), vv = v.to_vector<double>(), g = r.grad().to_vector<double>();
  for (size_t i = 0; i < yv.size(); ++i) EXPECT_EQ(g[i], yv[i] > 0 ? vv[i] : 0.0) << i;
}

TEST(BatchNormAddRelu, GradcheckTrainingAndEval) {
  Tensor x = randn({3, 2, 3, 2}, DType::float64).requires_grad_();
  Tensor r = randn({3, 2, 3, 2}, DType::float64).requires_grad_();
  Tensor w = randn({2}, DType::float64).requires_grad_();
  Tensor b = randn({2}, DType::float64).requires_grad_();
  auto r1 = gradcheck(
      [](const std::vector<Tensor>& in) {
        return batch_norm_add_relu(in[0], in[1], Tensor(), Tensor(), in[2], in[3], true);
      },
      {x, r, w, b});
  EXPECT_TRUE(r1.ok) << r1.message;
  Tensor rm = randn({2}, DType::float64), rv = add(rand({2}, DType::float64), 0.5);
  auto r2 = gradcheck(
      [&](const std::vector<Tensor>& in) { return batch_norm_add_relu(in[0], in[1], rm, rv, in[2], in[3], false); },
      {x, r, w, b});
  EXPECT_TRUE(r2.ok) << r2.message;
  // channels_last x beside an NCHW residual, and [N, C] rows.
  Tensor xl = contiguous(randn({2, 3, 2, 3}, DType::float64), MemoryFormat::channels_last).requires_grad_();
  Tensor rl = randn({2, 3, 2, 3}, DType::float64).requires_grad_();
  auto r3 = gradcheck(
      [](const std::vector<Tensor>& in) {
        return batch_norm_add_relu(in[0], in[1], Tensor(), Tensor(), Tensor(), Tensor(), true);
      },
      {xl, rl});
  EXPECT_TRUE(r3.ok) << r3.message;
  Tensor x2 = randn({6, 4}, DType::float64).requires_grad_(), res2 = randn({6, 4}, DType::float64).requires_grad_();
  Tensor w2 = randn({4}, DType::float64).requires_grad_();
  auto r4 = gradcheck(
      [](const std::vector<Tensor>& in) {
        return batch_norm_add_relu(in[0], in[1], Tensor(), Tensor(), in[2], Tensor(), true);
      },
      {x2, res2, w2});
  EXPECT_TRUE(r4.ok) << r4.message;
}

TEST(BatchNormAddRelu, ErrorsNameTheOp) {
  auto expect_named = [](auto&& call, const char* what) {
    try {
      call();
      ADD_FAILURE() << "expected an error: " << what;
    } catch (const Error& e) {
      EXPECT_NE(std::string(e.what()).find("[batch_norm_add_relu]"), std::string::npos) << e.what();
    }
  };
  Tensor x = randn({2, 3, 2});
  expect_named(
      [&] {
        batch_norm_add_relu(x, randn({2, 3, 3}), Tensor(), Tensor(), Tensor(), Tensor(), true);
      },
      "residual of another shape");
  expect_named([&] { batch_norm_add_relu(x, Tensor(), Tensor(), Tensor(), Tensor(), Tensor(), true); }, "no residual");
  expect_named(
      [&] {
        batch_norm_add_relu(x, ones({2, 3, 2}, DType::int64), Tensor(), Tensor(), Tensor(), Tensor(), true);
      },
      "integer residual");
  EXPECT_THROW(batch_norm_add_relu(x, randn({2, 3, 3}), Tensor(), Tensor(), Tensor(), Tensor(), true), ShapeError);
  EXPECT_THROW(batch_norm_add_relu(x, ones({2, 3, 2}, DType::int64), Tensor(), Tensor(), Tensor(), Tensor(), true),
               TypeError);
}

TEST(BatchNorm, RunningStatisticsSurviveTheCpuFallback) {
  Device dev = testing::test_device();
  testing::ScopedOpRemoval lacks({OpId::batch_norm});
  setenv("HEARTH_ENABLE_CPU_FALLBACK", "1", 1);
  Tensor x = randn({4, 2});
  Tensor rm = zeros({2}).to(dev), rv = ones({2}).to(dev);
  Tensor y = batch_norm(x.to(dev), rm, rv, Tensor(), Tensor(), true, 0.5);
  unsetenv("HEARTH_ENABLE_CPU_FALLBACK");
  EXPECT_EQ(y.device(), dev);
  EXPECT_EQ(rm.device(), dev);
  ChannelStats st = stats_of(cast(x, DType::float64));
  expect_close(rm.cpu(), {0.5 * st.mean[0], 0.5 * st.mean[1]}, 1e-6);
  expect_close(rv.cpu(), {0.5 + 0.5 * st.unbiased_var[0], 0.5 + 0.5 * st.unbiased_var[1]}, 1e-6);
  expect_close(y.cpu(), normalise_ref(x, st.mean, st.biased_var, {}, {}, 1e-5), 1e-5);
}

}  // namespace
}  // namespace hearth
