#include <cmath>

#include <gtest/gtest.h>

#include "hearth/autograd/gradcheck.h"
#include "hearth/core/generator.h"
#include "hearth/nn/linear.h"
#include "hearth/ops/factory.h"
#include "hearth/ops/linalg.h"
#include "hearth/ops/reduction.h"
#include "hearth/ops/view.h"
#include "tests/unit/nn/nn_testing.h"

namespace hearth {
namespace {

using nn::Linear;
using testing::expect_close;

TEST(NnLinear, ShapesNamesAndForwardMatchTheFunctionalOp) {
  auto lin = std::make_shared<Linear>(5, 3);
  EXPECT_EQ(lin->weight.shape(), (Shape{3, 5}));
  EXPECT_EQ(lin->bias.shape(), (Shape{3}));
  Tensor x = randn({4, 2, 5});  // any leading dims
  Tensor y = lin->forward(x);
  EXPECT_EQ(y.shape(), (Shape{4, 2, 3}));
  expect_close(y, linear(x, lin->weight, lin->bias), 0);
  expect_close((*lin)(x), y, 0);
  auto no_bias = std::make_shared<Linear>(5, 3, false);
  EXPECT_FALSE(no_bias->bias.defined());
  EXPECT_EQ(no_bias->parameters().size(), 1u);
  expect_close(no_bias->forward(x), linear(x, no_bias->weight), 0);
  EXPECT_EQ(lin->extra_repr(), "in_features=5, out_features=3, bias=true");
}

TEST(NnLinear, DefaultInitIsPyTorchs) {
  manual_seed(0);
  Linear lin(400, 300);
  // kaiming_uniform_(a = sqrt 5): U(-1/sqrt(400), 1/sqrt(400)); the same bound for the bias.
  const double bound = 1.0 / 20.0;
  auto w = testing::moments_of(lin.weight);
  EXPECT_GE(w.min, -bound);
  EXPECT_LE(w.max, bound);
  EXPECT_NEAR(w.max, bound, 0.001);
  EXPECT_NEAR(w.mean, 0.0, 0.001);
  EXPECT_NEAR(w.std, bound / std::sqrt(3.0), 0.001);
  auto b = testing::moments_of(lin.bias);
  EXPECT_GE(b.min, -bound);
  EXPECT_LE(b.max, bound);
  EXPECT_GT(b.max - b.min, bound);  // spread over the range, not constant
}

TEST(NnLinear, GradientsReachInputAndParameters) {
  auto lin = std::make_shared<Linear>(3, 2);
  lin->to(DType::float64);
  Tensor x = randn({4, 3}, DType::float64);
  x.requires_grad_(true);
  auto fn = [&](const std::vector<Tensor>& in) { return lin->forward(in[0]); };
  GradcheckResult r = gradcheck(fn, {x, lin->weight, lin->bias});
  EXPECT_TRUE(r.ok) << r.message;
  Tensor xt = transpose(randn({3, 4}, DType::float64), 0, 1);  // non-contiguous input
  xt.requires_grad_(true);
  r = gradcheck(fn, {xt, lin->weight, lin->bias});
  EXPECT_TRUE(r.ok) << r.message;
}

TEST(NnLinear, BadInputs) {
  Linear lin(3, 2);
  try {
    lin.forward(zeros({4, 5}));
    FAIL() << "expected ShapeError";
  } catch (const ShapeError& e) {
    EXPECT_TRUE(testing::contains(e.what(), "in_features=3")) << e.what();
    EXPECT_TRUE(testing::contains(e.what(), "[4, 5]")) << e.what();
  }
  EXPECT_THROW(Linear(-1, 2), ValueError);
}

}  // namespace
}  // namespace hearth
