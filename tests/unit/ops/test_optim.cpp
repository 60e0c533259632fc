// The foreach optimizer steps update each parameter exactly as the
// single-tensor steps do, across dtypes, sizes and non-contiguous parameters;
// the foreach gradient clipping gives the norm and the gradients computed
// here in double, for every norm type.
#include <cmath>
#include <limits>
#include <vector>

#include <gtest/gtest.h>

#include "hearth/autograd/grad_mode.h"
#include "hearth/core/generator.h"
#include "hearth/ops/elementwise.h"
#include "hearth/ops/factory.h"
#include "hearth/ops/view.h"
#include "hearth/optim/functional.h"

namespace hearth {
namespace {

struct Params {
  std::vector<Tensor> params, grads, a, b, c;
};

// Parameters of two dtypes and several sizes; the last is a transposed view.
Params make(uint64_t seed) {
  manual_seed(seed);
  Params p;
  const std::vector<std::pair<Shape, DType>> specs = {
      {{7}, DType::float32}, {{3, 5}, DType::float64}, {{1}, DType::float32}, {{4, 6}, DType::float32}};
  for (const auto& [shape, dt] : specs) {
    p.params.push_back(randn(shape, dt));
    p.grads.push_back(randn(shape, dt));
    p.a.push_back(randn(shape, dt));
    p.b.push_back(rand(shape, dt));
    p.c.push_back(rand(shape, dt));
  }
  p.params.back() = transpose(randn({6, 4}, DType::float32), 0, 1);
  return p;
}

void expect_same(const std::vector<Tensor>& x, const std::vector<Tensor>& y, const char* what) {
  ASSERT_EQ(x.size(), y.size());
  for (size_t i = 0; i < x.size(); ++i) {
    const auto values = [](const Tensor& t) { return contiguous(cast(t, DType::float64)).to_vector<double>(); };
    EXPECT_EQ(values(x[i]), values(y[i])) << what << " " << i << " differs";
  }
}

TEST(ForeachSteps, SgdMatchesTheSingleTensorStep) {
  NoGradGuard no_grad;
  Params one = make(1), many = make(1);
  SgdStepAttrs s;
  s.lr = 0.05;
  s.momentum = 0.9;
  s.weight_decay = 0.01;
  s.nesterov = true;
  for (int step = 0; step < 2; ++step) {
    s.init_buffer = step == 0;
    for (size_t i = 0; i < one.params.size(); ++i) optim::sgd_step_(one.params[i], one.grads[i], one.a[i], s);
    optim::sgd_step_foreach_(many.params, many.grads, many.a, s);
  }
  expect_same(one.params, many.params, "param");
  expect_same(one.a, many.a, "momentum buffer");
  EXPECT_FALSE(many.params.back().is_contiguous()) << "the view itself was updated, not a copy";
}

TEST(ForeachSteps, AdamMatchesTheSingleTensorStep) {
  NoGradGuard no_grad;
  Params one = make(2), many = make(2);
  AdamStepAttrs a;
  a.lr = 1e-2;
  a.weight_decay = 0.1;
  a.amsgrad = true;
  a.decoupled_weight_decay = true;
  for (int step = 1; step <= 2; ++step) {
    a.step = step;
    for (size_t i = 0; i < one.params.size(); ++i)
      optim::adam_step_(one.params[i], one.grads[i], one.a[i], one.b[i], one.c[i], a);
    optim::adam_step_foreach_(many.params, many.grads, many.a, many.b, many.c, a);
  }
  expect_same(one.params, many.params, "param");
  expect_same(one.a, many.a, "exp_avg");
  expect_same(one.b, many.b, "exp_avg_sq");
  expect_same(one.c, many.c, "max_exp_avg_sq");
}

TEST(ForeachSteps, ListsOfDifferentLengthsAreRejected) {
  NoGradGuard no_grad;
  Params p = make(3);
  p.grads.pop_back();
  SgdStepAttrs s;
  EXPECT_THROW(optim::sgd_step_foreach_(p.params, p.grads, {}, s), ValueError);
}

// The norm and clipped values in double, from each gradient's norm rounded
// to `acc` as the op rounds it.
struct ClipExpected {
  double total;
  std::vector<std::vector<double>> grads;
};

ClipExpected clip_in_double(const std::vector<Tensor>& grads, double max_norm, double p, DType acc) {
  const bool inf = std::isinf(p);
  auto round_acc = [&](double v) { return acc == DType::float32 ? static_cast<double>(static_cast<float>(v)) : v; };
  double norms_power = 0;
  for (const Tensor& g : grads) {
    double s = 0;
    for (double v : contiguous(cast(g, DType::float64)).to_vector<double>())
      s = inf ? std::max(s, std::abs(v)) : s + std::pow(std::abs(v), p);
    const double norm = round_acc(inf ? s : std::pow(s, 1.0 / p));
    norms_power = inf ? std::max(norms_power, norm) : norms_power + std::pow(norm, p);
  }
  ClipExpected e;
  e.total = round_acc(inf ? norms_power : std::pow(norms_power, 1.0 / p));
  const double coef = std::min(1.0, max_norm / (e.total + 1e-6));
  for (const Tensor& g : grads) {
    std::vector<double> v = contiguous(cast(g, DType::float64)).to_vector<double>();
    for (double& x : v) x *= coef;
    e.grads.push_back(v);
  }
  return e;
}

TEST(ClipGradNormForeach, MatchesTheNormAndScalingInDoubleForEveryNormType) {
  NoGradGuard no_grad;
  const double kInf = std::numeric_limits<double>::infinity();
  for (DType dt : {DType::float32, DType::float64, DType::bfloat16}) {
    for (double p : {1.0, 2.0, 3.0, kInf}) {
      for (double max_norm : {0.5, 1e6}) {  // clipped, and left as it is
        SCOPED_TRACE(std::string(dtype_name(dt)) + " p=" + std::to_string(p) + " max_norm=" + std::to_string(max_norm));
        manual_seed(11);
        // Sizes around the CPU kernel's block of 65536, one transposed (not contiguous).
        std::vector<Tensor> grads = {randn({7}, dt), randn({65537}, dt), randn({1}, dt),
                                     transpose(randn({6, 4}, dt), 0, 1)};
        const DType acc = dt == DType::float64 ? DType::float64 : DType::float32;
        const ClipExpected e = clip_in_double(grads, max_norm, p, acc);
        bool done = false;
        const Tensor total = optim::clip_grad_norm_foreach_(grads, ClipGradNormAttrs{max_norm, p}, &done);
        ASSERT_TRUE(done);
        EXPECT_EQ(total.dtype(), acc);
        EXPECT_EQ(total.dim(), 0);
        const double tol = dt == DType::float64 ? 1e-12 : 1e-5;
        EXPECT_NEAR(total.item<double>(), e.total, tol * e.total);
        const double grad_tol = dt == DType::bfloat16 ? 1e-2 : dt == DType::float32 ? 1e-6 : 1e-12;
        for (size_t i = 0; i < grads.size(); ++i) {
          const std::vector<double> got = contiguous(cast(grads[i], DType::float64)).to_vector<double>();
          ASSERT_EQ(got.size(), e.grads[i].size());
          for (size_t k = 0; k < got.size(); ++k)
            ASSERT_NEAR(got[k], e.grads[i][k], grad_tol * (std::abs(e.grads[i][k]) + 1e-3))
                << "gradient " << i << "[" << k << "]";
        }
      }
    }
  }
}

TEST(ClipGradNormForeach, GradientsOfTwoDtypesAreRejected) {
  NoGradGuard no_grad;
  std::vector<Tensor> grads = {randn({3}, DType::float32), randn({3}, DType::float64)};
  bool done = false;
  EXPECT_THROW(optim::clip_grad_norm_foreach_(grads, ClipGradNormAttrs{}, &done), TypeError);
  EXPECT_FALSE(done);
}

}  // namespace
}  // namespace hearth
