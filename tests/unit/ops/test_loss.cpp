#include <cmath>
#include <string>
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

// PyTorch's definition, term by term, in float64: nll and the smoothing term are
// reduced separately (the mean divides both by the summed target weights) and
// combined as (1 - ls) * nll + ls / C * smooth. `x` is [N, C, S] row-major.
std::vector<double> ce_reference(const std::vector<double>& x, const std::vector<int64_t>& t, int64_t N, int64_t C,
                                 int64_t S, const std::vector<double>& w, int64_t ignore, double ls,
                                 const std::string& reduction, bool log_probs_given = false) {
  std::vector<double> nll(N * S), smooth(N * S);
  double wsum = 0;
  for (int64_t n = 0; n < N; ++n)
    for (int64_t s = 0; s < S; ++s) {
      auto at = [&](int64_t c) { return x[(n * C + c) * S + s]; };
      double lse = 0;
      if (!log_probs_given) {
        double mx = -INFINITY, acc = 0;
        for (int64_t c = 0; c < C; ++c) mx = std::max(mx, at(c));
        for (int64_t c = 0; c < C; ++c) acc += std::exp(at(c) - mx);
        lse = mx + std::log(acc);
      }
      const int64_t i = n * S + s, tgt = t[i];
      if (tgt == ignore) continue;
      const double wt = w.empty() ? 1.0 : w[tgt];
      nll[i] = -wt * (at(tgt) - lse);
      for (int64_t c = 0; c < C; ++c) smooth[i] -= (w.empty() ? 1.0 : w[c]) * (at(c) - lse);
      wsum += wt;
    }
  auto reduce = [&](const std::vector<double>& v) {
    if (reduction == "none") return v;
    double s = 0;
    for (double e : v) s += e;
    return std::vector<double>{reduction == "sum" ? s : s / wsum};
  };
  std::vector<double> a = reduce(nll), b = reduce(smooth);
  for (size_t i = 0; i < a.size(); ++i) a[i] = (1 - ls) * a[i] + ls / C * b[i];
  return a;
}

void expect_close(const Tensor& t, const std::vector<double>& ref, double tol) {
  std::vector<double> v = t.to_vector<double>();
  ASSERT_EQ(v.size(), ref.size());
  for (size_t i = 0; i < v.size(); ++i) EXPECT_NEAR(v[i], ref[i], tol) << "element " << i;
}

Tensor targets(const std::vector<int64_t>& v, const Shape& shape) { return tensor(v, shape); }

TEST(CrossEntropy, HandCheckedValues) {
  Tensor logits = tensor(std::vector<float>{1, 2, 3}, {1, 3});
  Tensor t = targets({2}, {1});
  // -log softmax([1, 2, 3])[2]
  EXPECT_NEAR(cross_entropy(logits, t).item<double>(), 0.40760596, 1e-6);
  // Smoothing 0.1: 0.9 * 0.40760596 + 0.1 * mean(2.40760596, 1.40760596, 0.40760596)
  EXPECT_NEAR(cross_entropy(logits, t, Tensor(), -100, "mean", 0.1).item<double>(), 0.50760596, 1e-6);
}

TEST(CrossEntropy, MatchesReferenceForEveryReduction) {
  Tensor x = randn({4, 5}, DType::float64);
  std::vector<int64_t> tv{0, 4, 2, 2};
  for (const char* red : {"mean", "sum", "none"}) {
    Tensor out = cross_entropy(x, targets(tv, {4}), Tensor(), -100, red);
    expect_close(out, ce_reference(x.to_vector<double>(), tv, 4, 5, 1, {}, -100, 0.0, red), 1e-12);
    EXPECT_EQ(out.shape(), std::string(red) == "none" ? Shape{4} : Shape{});
  }
}

TEST(CrossEntropy, ClassWeightsMeanDividesBySummedTargetWeights) {
  Tensor x = randn({5, 3}, DType::float64);
  std::vector<int64_t> tv{0, 1, 2, 2, 1};
  std::vector<double> w{0.5, 2.0, 1.5};
  for (const char* red : {"mean", "sum", "none"}) {
    Tensor out = cross_entropy(x, targets(tv, {5}), tensor(w), -100, red);
    expect_close(out, ce_reference(x.to_vector<double>(), tv, 5, 3, 1, w, -100, 0.0, red), 1e-12);
  }
}

TEST(CrossEntropy, IgnoreIndex) {
  Tensor x = randn({4, 3}, DType::float64);
  std::vector<int64_t> tv{1, -100, 2, -100};
  Tensor none = cross_entropy(x, targets(tv, {4}), Tensor(), -100, "none");
  std::vector<double> v = none.to_vector<double>();
  EXPECT_EQ(v[1], 0.0);
  EXPECT_EQ(v[3], 0.0);
  expect_close(cross_entropy(x, targets(tv, {4})), {(v[0] + v[2]) / 2}, 1e-12);
  // A custom ignore_index that is a valid class.
  std::vector<int64_t> tv2{1, 0, 2, 0};
  expect_close(cross_entropy(x, targets(tv2, {4}), Tensor(), 0),
               ce_reference(x.to_vector<double>(), tv2, 4, 3, 1, {}, 0, 0.0, "mean"), 1e-12);
  // Everything ignored: the mean is 0/0, as in PyTorch.
  EXPECT_TRUE(std::isnan(cross_entropy(x, targets({-100, -100, -100, -100}, {4})).item<double>()));
}

TEST(CrossEntropy, LabelSmoothingWithWeightsAndIgnore) {
  Tensor x = randn({6, 4}, DType::float64);
  std::vector<int64_t> tv{0, 3, -1, 2, 1, 3};
  std::vector<double> w{1.0, 0.25, 2.0, 0.75};
  for (const char* red : {"mean", "sum", "none"})
    for (double ls : {0.1, 0.35, 1.0}) {
      expect_close(cross_entropy(x, targets(tv, {6}), tensor(w), -1, red, ls),
                   ce_reference(x.to_vector<double>(), tv, 6, 4, 1, w, -1, ls, red), 1e-12);
      expect_close(cross_entropy(x, targets(tv, {6}), Tensor(), -1, red, ls),
                   ce_reference(x.to_vector<double>(), tv, 6, 4, 1, {}, -1, ls, red), 1e-12);
    }
}

TEST(CrossEntropy, SpatialInputs) {
  // [N, C, d1] and [N, C, d1, d2]: the class dim is 1.
  Tensor x3 = randn({2, 4, 3}, DType::float64);
  std::vector<int64_t> t3{0, 3, 1, 2, 2, -100};
  Tensor o3 = cross_entropy(x3, targets(t3, {2, 3}), Tensor(), -100, "none");
  EXPECT_EQ(o3.shape(), (Shape{2, 3}));
  expect_close(o3, ce_reference(x3.to_vector<double>(), t3, 2, 4, 3, {}, -100, 0.0, "none"), 1e-12);

  Tensor x4 = randn({2, 3, 2, 2}, DType::float64);
  std::vector<int64_t> t4{0, 1, 2, 1, 2, 2, 0, 1};
  std::vector<double> w{0.2, 1.0, 3.0};
  for (const char* red : {"mean", "sum", "none"}) {
    Tensor o4 = cross_entropy(x4, targets(t4, {2, 2, 2}), tensor(w), -100, red, 0.2);
    expect_close(o4, ce_reference(x4.to_vector<double>(), t4, 2, 3, 4, w, -100, 0.2, red), 1e-12);
  }
}

TEST(CrossEntropy, UnbatchedInputAndInt32Targets) {
  Tensor x = randn({5}, DType::float64);
  Tensor out = cross_entropy(x, scalar_tensor(3, DType::int64), Tensor(), -100, "none");
  EXPECT_EQ(out.dim(), 0);
  expect_close(out, ce_reference(x.to_vector<double>(), {3}, 1, 5, 1, {}, -100, 0.0, "none"), 1e-12);
  Tensor xb = randn({3, 4}, DType::float64);
  Tensor t32 = tensor(std::vector<int32_t>{3, 0, 1});
  expect_close(cross_entropy(xb, t32), cross_entropy(xb, targets({3, 0, 1}, {3})).to_vector<double>(), 0);
}

TEST(CrossEntropy, NonContiguousLogits) {
  Tensor base = randn({5, 4}, DType::float64);
  Tensor x = transpose(base, 0, 1);  // [4, 5], strided
  std::vector<int64_t> tv{4, 0, 1, 3};
  expect_close(cross_entropy(x, targets(tv, {4}), Tensor(), -100, "none"),
               ce_reference(contiguous(x).to_vector<double>(), tv, 4, 5, 1, {}, -100, 0.0, "none"), 1e-12);
}

TEST(CrossEntropy, HalfTypes) {
  Tensor x64 = randn({6, 10}, DType::float64);
  std::vector<int64_t> tv{0, 9, 3, 3, 7, 1};
  for (DType dt : {DType::float32, DType::bfloat16, DType::float16}) {
    Tensor x = cast(x64, dt);
    Tensor out = cross_entropy(x, targets(tv, {6}), Tensor(), -100, "mean", 0.1);
    EXPECT_EQ(out.dtype(), dt);
    const double tol = dt == DType::float32 ? 1e-6 : 1e-2;
    expect_close(out, ce_reference(cast(x, DType::float64).to_vector<double>(), tv, 6, 10, 1, {}, -100, 0.1, "mean"),
                 tol);
    Tensor xg = x.detach().requires_grad_();
    cross_entropy(xg, targets(tv, {6})).backward();
    EXPECT_EQ(xg.grad().dtype(), dt);
  }
}

TEST(CrossEntropy, GradientIsSoftmaxMinusOneHot) {
  Tensor x = tensor(std::vector<float>{1, 2, 3}, {1, 3}).requires_grad_();
  cross_entropy(x, targets({2}, {1})).backward();
  expect_close(x.grad(), {0.09003057, 0.24472847, 0.66524096 - 1.0}, 1e-6);
}

TEST(CrossEntropy, GradcheckEveryOption) {
  Tensor x = randn({4, 3}, DType::float64).requires_grad_();
  Tensor w = tensor(std::vector<double>{0.3, 1.2, 2.0});
  Tensor t = targets({0, 2, 1, -100}, {4});
  for (const char* red : {"mean", "sum", "none"})
    for (double ls : {0.0, 0.2}) {
      for (const Tensor& weight : {Tensor(), w}) {
        auto r = gradcheck(
            [&](const std::vector<Tensor>& in) { return cross_entropy(in[0], t, weight, -100, red, ls); }, {x});
        EXPECT_TRUE(r.ok) << red << " ls=" << ls << ": " << r.message;
      }
    }
}

TEST(CrossEntropy, GradcheckSpatialAndNonContiguous) {
  Tensor x4 = randn({2, 3, 2, 2}, DType::float64).requires_grad_();
  Tensor t4 = targets({0, 1, 2, 1, 2, 2, 0, 1}, {2, 2, 2});
  auto r = gradcheck(
      [&](const std::vector<Tensor>& in) { return cross_entropy(in[0], t4, Tensor(), -100, "mean", 0.1); }, {x4});
  EXPECT_TRUE(r.ok) << r.message;
  Tensor xt = transpose(randn({3, 4}, DType::float64), 0, 1);  // [4, 3], strided
  xt.requires_grad_();
  Tensor t = targets({0, 2, 1, 1}, {4});
  auto r2 =
      gradcheck([&](const std::vector<Tensor>& in) { return cross_entropy(in[0], t, Tensor(), -100, "none"); }, {xt});
  EXPECT_TRUE(r2.ok) << r2.message;
}

TEST(CrossEntropy, EmptyBatch) {
  Tensor x = zeros({0, 3});
  Tensor t = tensor(std::vector<int64_t>{}, {0});
  EXPECT_TRUE(std::isnan(cross_entropy(x, t).item<double>()));
  EXPECT_EQ(cross_entropy(x, t, Tensor(), -100, "sum").item<double>(), 0.0);
  EXPECT_EQ(cross_entropy(x, t, Tensor(), -100, "none").shape(), (Shape{0}));
}

TEST(CrossEntropy, TargetOutOfRangeNamesValueAndClassCount) {
  Tensor x = randn({3, 5});
  for (int64_t bad : {7, -3, 5}) {
    try {
      cross_entropy(x, targets({0, bad, 1}, {3}));
      FAIL() << "expected ValueError for target " << bad;
    } catch (const ValueError& e) {
      const std::string m = e.what();
      EXPECT_NE(m.find("[cross_entropy]"), std::string::npos) << m;
      EXPECT_NE(m.find("target " + std::to_string(bad)), std::string::npos) << m;
      EXPECT_NE(m.find("5 classes"), std::string::npos) << m;
    }
  }
}

TEST(CrossEntropy, BadInput) {
  Tensor x = randn({3, 5});
  try {
    cross_entropy(x, targets({0, 1}, {2}));
    FAIL() << "expected ShapeError";
  } catch (const ShapeError& e) {
    const std::string m = e.what();
    EXPECT_NE(m.find("[3]"), std::string::npos) << m;
    EXPECT_NE(m.find("[2]"), std::string::npos) << m;
  }
  EXPECT_THROW(cross_entropy(randn({2, 3, 4}), targets({0, 1}, {2})), ShapeError);
  EXPECT_THROW(cross_entropy(x, randn({3})), TypeError);
  EXPECT_THROW(cross_entropy(ones({3, 5}, DType::int64), targets({0, 1, 2}, {3})), TypeError);
  EXPECT_THROW(cross_entropy(x, targets({0, 1, 2}, {3}), ones({4})), ShapeError);
  EXPECT_THROW(cross_entropy(x, targets({0, 1, 2}, {3}), Tensor(), -100, "avg"), ValueError);
  EXPECT_THROW(cross_entropy(x, targets({0, 1, 2}, {3}), Tensor(), -100, "mean", 1.5), ValueError);
  EXPECT_THROW(cross_entropy(zeros({3, 0}), targets({0, 0, 0}, {3})), ShapeError);
}

TEST(NllLoss, MatchesReferenceWithWeightsAndIgnore) {
  Tensor lp = log_softmax(randn({5, 4}, DType::float64), 1);
  std::vector<int64_t> tv{3, 0, 7, 1, 1};
  std::vector<double> w{0.5, 1.5, 1.0, 2.0};
  for (const char* red : {"mean", "sum", "none"}) {
    expect_close(nll_loss(lp, targets(tv, {5}), tensor(w), 7, red),
                 ce_reference(lp.to_vector<double>(), tv, 5, 4, 1, w, 7, 0.0, red, true), 1e-12);
  }
  // nll_loss(log_softmax(x)) is cross_entropy(x).
  Tensor x = randn({3, 6}, DType::float64);
  Tensor t = targets({5, 0, 2}, {3});
  EXPECT_NEAR(nll_loss(log_softmax(x, 1), t).item<double>(), cross_entropy(x, t).item<double>(), 1e-12);
}

TEST(NllLoss, SpatialAndHalf) {
  Tensor lp = randn({2, 3, 2}, DType::float64);
  std::vector<int64_t> tv{2, 0, 1, 1};
  Tensor o = nll_loss(lp, targets(tv, {2, 2}), Tensor(), -100, "none");
  EXPECT_EQ(o.shape(), (Shape{2, 2}));
  expect_close(o, ce_reference(lp.to_vector<double>(), tv, 2, 3, 2, {}, -100, 0.0, "none", true), 1e-12);
  Tensor hb = cast(lp, DType::bfloat16);
  EXPECT_EQ(nll_loss(hb, targets(tv, {2, 2})).dtype(), DType::bfloat16);
  expect_close(nll_loss(hb, targets(tv, {2, 2})),
               ce_reference(cast(hb, DType::float64).to_vector<double>(), tv, 2, 3, 2, {}, -100, 0.0, "mean", true),
               1e-2);
}

TEST(NllLoss, Gradcheck) {
  Tensor t = targets({1, 0, -100, 2}, {4});
  Tensor w = tensor(std::vector<double>{1.0, 0.5, 2.0});
  Tensor x = randn({4, 3}, DType::float64).requires_grad_();
  for (const char* red : {"mean", "sum", "none"}) {
    auto r = gradcheck([&](const std::vector<Tensor>& in) { return nll_loss(in[0], t, w, -100, red); }, {x});
    EXPECT_TRUE(r.ok) << red << ": " << r.message;
  }
  Tensor xt = transpose(randn({3, 4}, DType::float64), 0, 1);
  xt.requires_grad_();
  auto r = gradcheck([&](const std::vector<Tensor>& in) { return nll_loss(in[0], t); }, {xt});
  EXPECT_TRUE(r.ok) << r.message;
}

TEST(NllLoss, BadTarget) {
  try {
    nll_loss(randn({2, 3}), targets({1, 3}, {2}));
    FAIL() << "expected ValueError";
  } catch (const ValueError& e) {
    const std::string m = e.what();
    EXPECT_NE(m.find("[nll_loss] target 3"), std::string::npos) << m;
    EXPECT_NE(m.find("3 classes"), std::string::npos) << m;
  }
  EXPECT_THROW(nll_loss(randn({2, 3}), targets({1}, {1})), ShapeError);
}

TEST(MseLoss, ValuesAndReductions) {
  Tensor a = tensor({1.f, 2.f, 3.f, 4.f});
  Tensor b = tensor({1.5f, 2.f, 1.f, 5.f});
  expect_close(mse_loss(a, b, "none"), {0.25, 0, 4, 1}, 1e-7);
  expect_close(mse_loss(a, b, "sum"), {5.25}, 1e-6);
  expect_close(mse_loss(a, b), {5.25 / 4}, 1e-6);
  Tensor at = transpose(randn({3, 2}, DType::float64), 0, 1);
  Tensor bt = randn({2, 3}, DType::float64);
  std::vector<double> av = contiguous(at).to_vector<double>(), bv = bt.to_vector<double>();
  double s = 0;
  for (int i = 0; i < 6; ++i) s += (av[i] - bv[i]) * (av[i] - bv[i]);
  expect_close(mse_loss(at, bt), {s / 6}, 1e-12);
}

TEST(MseLoss, Gradcheck) {
  Tensor a = randn({3, 4}, DType::float64).requires_grad_();
  Tensor b = transpose(randn({4, 3}, DType::float64), 0, 1);
  b.requires_grad_();
  for (const char* red : {"mean", "sum", "none"}) {
    auto r = gradcheck([&](const std::vector<Tensor>& in) { return mse_loss(in[0], in[1], red); }, {a, b});
    EXPECT_TRUE(r.ok) << red << ": " << r.message;
  }
}

TEST(MseLoss, BadInput) {
  try {
    mse_loss(randn({4, 1}), randn({4}));
    FAIL() << "expected ShapeError";
  } catch (const ShapeError& e) {
    const std::string m = e.what();
    EXPECT_NE(m.find("[mse_loss]"), std::string::npos) << m;
    EXPECT_NE(m.find("[4, 1]"), std::string::npos) << m;
  }
  EXPECT_THROW(mse_loss(randn({2}), randn({2}), "mean_all"), ValueError);
  EXPECT_THROW(mse_loss(ones({2}, DType::int64), randn({2})), TypeError);
}

}  // namespace
}  // namespace hearth
