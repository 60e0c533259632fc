// Every image op on channels_last (NHWC) input: the same values as on NCHW
// input, the output channels_last too, and float64 gradients that check.
#include <cmath>
#include <functional>
#include <string>

#include <gtest/gtest.h>

#include "hearth/autograd/gradcheck.h"
#include "hearth/core/generator.h"
#include "hearth/ops/elementwise.h"
#include "hearth/ops/factory.h"
#include "hearth/ops/nn_functional.h"
#include "hearth/ops/reduction.h"
#include "hearth/ops/view.h"

namespace hearth {
namespace {

const MemoryFormat kCl = MemoryFormat::channels_last;

Tensor nhwc(const Tensor& t) { return contiguous(t, kCl); }

// A float64 channels_last leaf for gradcheck.
Tensor nhwc_leaf(const Shape& s) { return nhwc(randn(s, DType::float64)).detach().requires_grad_(); }

void expect_same(const Tensor& nchw, const Tensor& cl, double tol = 1e-5) {
  ASSERT_EQ(nchw.shape(), cl.shape());
  const auto a = nchw.contiguous().to_vector<double>(), b = cl.contiguous().to_vector<double>();
  for (size_t i = 0; i < a.size(); ++i) ASSERT_NEAR(a[i], b[i], tol * (1 + std::abs(a[i]))) << "element " << i;
}

void expect_nhwc(const Tensor& t) {
  EXPECT_TRUE(t.is_contiguous(kCl)) << "shape " << t.shape_string() << " strides " << shape_str(t.strides());
}

TEST(ChannelsLast, Conv2dForwardAndBackwardMatchNchw) {
  manual_seed(3);
  Tensor x = randn({2, 5, 9, 8}), w = randn({7, 5, 3, 3}), b = randn({7});
  for (bool nhwc_weight : {true, false}) {
    Tensor x0 = x.detach().requires_grad_(), w0 = w.detach().requires_grad_(), b0 = b.detach().requires_grad_();
    Tensor y0 = conv2d(x0, w0, b0, {2, 1}, {1, 1});
    Tensor x1 = nhwc(x).detach().requires_grad_();
    Tensor w1 = (nhwc_weight ? nhwc(w) : w).detach().requires_grad_(), b1 = b.detach().requires_grad_();
    Tensor y1 = conv2d(x1, w1, b1, {2, 1}, {1, 1});
    expect_nhwc(y1);
    expect_same(y0, y1);
    Tensor g = randn(y0.shape());
    y0.backward(g);
    y1.backward(nhwc(g));
    expect_nhwc(x1.grad());
    expect_same(x0.grad(), x1.grad());
    expect_same(w0.grad(), w1.grad());
    expect_same(b0.grad(), b1.grad());
    // The weight's gradient has the weight's own format (optimizers need it to match).
    EXPECT_EQ(w1.grad().suggest_memory_format(), w1.suggest_memory_format());
  }
}

TEST(ChannelsLast, Conv2dGroupsAndPointwise) {
  manual_seed(4);
  Tensor x = randn({2, 6, 7, 5});
  Tensor wg = randn({4, 3, 3, 3}), w1 = randn({8, 6, 1, 1});
  Tensor y = conv2d(nhwc(x), nhwc(wg), Tensor(), {1, 1}, {1, 1}, {1, 1}, 2);
  expect_nhwc(y);
  expect_same(conv2d(x, wg, Tensor(), {1, 1}, {1, 1}, {1, 1}, 2), y);
  Tensor p = conv2d(nhwc(x), nhwc(w1), Tensor());
  expect_nhwc(p);
  expect_same(conv2d(x, w1, Tensor()), p);
}

TEST(ChannelsLast, Conv2dGradcheck) {
  manual_seed(5);
  auto r = gradcheck(
      [](const std::vector<Tensor>& t) {
        return conv2d(t[0], t[1], t[2], {1, 2}, {1, 0}, {1, 1}, 1);
      },
      {nhwc_leaf({2, 3, 5, 4}), nhwc_leaf({4, 3, 3, 2}), randn({4}, DType::float64).requires_grad_()});
  EXPECT_TRUE(r.ok) << r.message;
}

TEST(ChannelsLast, BatchNormTrainingAndEvalMatchNchw) {
  manual_seed(6);
  Tensor x = randn({3, 4, 5, 6}), w = randn({4}), b = randn({4});
  Tensor rm0 = zeros({4}), rv0 = ones({4}), rm1 = zeros({4}), rv1 = ones({4});
  Tensor x0 = x.detach().requires_grad_(), x1 = nhwc(x).detach().requires_grad_();
  Tensor w0 = w.detach().requires_grad_(), w1 = w.detach().requires_grad_();
  Tensor y0 = batch_norm(x0, rm0, rv0, w0, b, true, 0.1, 1e-5);
  Tensor y1 = batch_norm(x1, rm1, rv1, w1, b, true, 0.1, 1e-5);
  expect_nhwc(y1);
  expect_same(y0, y1);
  expect_same(rm0, rm1);
  expect_same(rv0, rv1);
  Tensor g = randn(x.shape());
  y0.backward(g);
  y1.backward(nhwc(g));
  expect_nhwc(x1.grad());
  expect_same(x0.grad(), x1.grad(), 1e-4);
  expect_same(w0.grad(), w1.grad(), 1e-4);
  Tensor e = batch_norm(nhwc(x), rm1, rv1, w, b, false, 0.1, 1e-5);
  expect_nhwc(e);
  expect_same(batch_norm(x, rm0, rv0, w, b, false, 0.1, 1e-5), e);
}

TEST(ChannelsLast, BatchNormGradcheck) {
  manual_seed(7);
  auto r = gradcheck(
      [](const std::vector<Tensor>& t) { return batch_norm(t[0], Tensor(), Tensor(), t[1], t[2], true, 0.1, 1e-5); },
      {nhwc_leaf({2, 3, 3, 2}), randn({3}, DType::float64).requires_grad_(),
       randn({3}, DType::float64).requires_grad_()});
  EXPECT_TRUE(r.ok) << r.message;
}

TEST(ChannelsLast, PoolingMatchesNchw) {
  manual_seed(8);
  Tensor x = randn({2, 3, 9, 7});
  using Fn = std::function<Tensor(const Tensor&)>;
  const std::vector<Fn> ops = {
      [](const Tensor& t) {
        return max_pool2d(t, {3, 3}, {2, 2}, {1, 1});
      },
      [](const Tensor& t) {
        return max_pool2d(t, {2, 2}, {2, 1}, {0, 1}, {2, 1}, true);
      },
      [](const Tensor& t) {
        return avg_pool2d(t, {3, 2}, {2, 2}, {1, 1}, true, false);
      },
      [](const Tensor& t) {
        return adaptive_avg_pool2d(t, {1, 1});
      },
      [](const Tensor& t) {
        return adaptive_avg_pool2d(t, {4, 3});
      },
  };
  for (size_t i = 0; i < ops.size(); ++i) {
    SCOPED_TRACE("pool op " + std::to_string(i));
    Tensor x0 = x.detach().requires_grad_(), x1 = nhwc(x).detach().requires_grad_();
    Tensor y0 = ops[i](x0), y1 = ops[i](x1);
    expect_nhwc(y1);
    expect_same(y0, y1);
    Tensor g = randn(y0.shape());
    y0.backward(g);
    y1.backward(nhwc(g));
    expect_nhwc(x1.grad());
    expect_same(x0.grad(), x1.grad());
  }
}

TEST(ChannelsLast, PoolingGradcheck) {
  manual_seed(9);
  for (int op = 0; op < 3; ++op) {
    auto r = gradcheck(
        [op](const std::vector<Tensor>& t) {
          if (op == 0) return max_pool2d(t[0], {2, 2}, {2, 2}, {1, 1});
          if (op == 1) return avg_pool2d(t[0], {3, 3}, {2, 2}, {1, 1});
          return adaptive_avg_pool2d(t[0], {2, 3});
        },
        {nhwc_leaf({2, 3, 5, 6})});
    EXPECT_TRUE(r.ok) << "op " << op << ": " << r.message;
  }
}

TEST(ChannelsLast, ElementwiseOutputsKeepTheLayout) {
  Tensor a = nhwc(randn({2, 3, 4, 5})), b = nhwc(randn({2, 3, 4, 5}));
  expect_nhwc(relu(a));
  expect_nhwc(add(a, b));
  expect_nhwc(mul(a, 2.0));
  expect_nhwc(add(a, randn({1, 3, 1, 1})));  // a broadcast bias keeps the full-shape operand's layout
  expect_nhwc(cast(a, DType::float64));
  expect_same(add(a.contiguous(), b.contiguous()), add(a, b));
  Tensor x = a.detach().requires_grad_();
  relu(x).sum().backward();
  expect_nhwc(x.grad());
  // Flattening the [N, C, 1, 1] output of a global pool is a plain view.
  Tensor pooled = adaptive_avg_pool2d(a, {1, 1});
  EXPECT_EQ(flatten(pooled, 1).shape(), (Shape{2, 3}));
}

}  // namespace
}  // namespace hearth
