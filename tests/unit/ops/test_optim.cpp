// The foreach optimizer steps update each parameter exactly as the
// single-tensor steps do, across dtypes, sizes and non-contiguous parameters.
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

}  // namespace
}  // namespace hearth
