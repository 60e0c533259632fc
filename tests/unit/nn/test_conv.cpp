#include <cmath>

#include <gtest/gtest.h>

#include "hearth/autograd/gradcheck.h"
#include "hearth/core/generator.h"
#include "hearth/nn/conv.h"
#include "hearth/ops/factory.h"
#include "tests/unit/nn/nn_testing.h"

namespace hearth {
namespace {

using nn::Conv2d;
using testing::expect_close;

TEST(NnConv2d, ForwardMatchesTheFunctionalOp) {
  auto conv = std::make_shared<Conv2d>(4, 6, Pair{3, 2}, Pair{2, 1}, Pair{1, 0}, Pair{1, 1}, 2);
  EXPECT_EQ(conv->weight.shape(), (Shape{6, 2, 3, 2}));
  EXPECT_EQ(conv->bias.shape(), (Shape{6}));
  Tensor x = randn({2, 4, 7, 5});
  expect_close(conv->forward(x), conv2d(x, conv->weight, conv->bias, {2, 1}, {1, 0}, {1, 1}, 2), 0);
  // The square form: Conv2d(in, out, k, stride, padding).
  auto sq = std::make_shared<Conv2d>(1, 3, 3, 1, 1);
  EXPECT_EQ(sq->weight.shape(), (Shape{3, 1, 3, 3}));
  EXPECT_EQ(sq->padding, (Pair{1, 1}));
  EXPECT_EQ(sq->forward(randn({2, 1, 5, 5})).shape(), (Shape{2, 3, 5, 5}));
  EXPECT_EQ(sq->extra_repr(), "1, 3, kernel_size=(3, 3), stride=(1, 1), padding=(1, 1)");
  auto nb = std::make_shared<Conv2d>(2, 2, 1, 1, 0, 1, 1, false);
  EXPECT_FALSE(nb->bias.defined());
  EXPECT_EQ(nb->named_parameters().size(), 1u);
}

TEST(NnConv2d, DefaultInitIsPyTorchs) {
  manual_seed(0);
  Conv2d conv(32, 64, 3);  // fan_in = 32 * 9 = 288
  const double bound = 1.0 / std::sqrt(288.0);
  auto w = testing::moments_of(conv.weight);
  EXPECT_GE(w.min, -bound);
  EXPECT_LE(w.max, bound);
  EXPECT_NEAR(w.std, bound / std::sqrt(3.0), 0.01 * bound);
  auto b = testing::moments_of(conv.bias);
  EXPECT_GE(b.min, -bound);
  EXPECT_LE(b.max, bound);
  // Groups divide the fan-in.
  Conv2d grouped(32, 64, 3, 1, 0, 1, 4);  // fan_in = 8 * 9 = 72
  EXPECT_NEAR(testing::moments_of(grouped.weight).max, 1.0 / std::sqrt(72.0), 0.005);
}

TEST(NnConv2d, Gradcheck) {
  auto conv = std::make_shared<Conv2d>(2, 2, 2, 1, 1);
  conv->to(DType::float64);
  Tensor x = randn({1, 2, 3, 3}, DType::float64);
  x.requires_grad_(true);
  GradcheckResult r =
      gradcheck([&](const std::vector<Tensor>& in) { return conv->forward(in[0]); }, {x, conv->weight, conv->bias});
  EXPECT_TRUE(r.ok) << r.message;
}

TEST(NnConv2d, BadArguments) {
  EXPECT_THROW(Conv2d(3, 4, 3, 1, 0, 1, 2), ValueError);  // 3 channels, 2 groups
  EXPECT_THROW(Conv2d(4, 3, 3, 1, 0, 1, 2), ValueError);
  EXPECT_THROW(Conv2d(4, 4, 0), ValueError);
  Conv2d conv(3, 4, 3);
  EXPECT_THROW(conv.forward(zeros({1, 2, 5, 5})), ShapeError);
}

}  // namespace
}  // namespace hearth
