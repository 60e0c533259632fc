#include <gtest/gtest.h>

#include "hearth/nn/pooling.h"
#include "hearth/ops/factory.h"
#include "tests/unit/nn/nn_testing.h"

namespace hearth {
namespace {

using testing::expect_close;

TEST(NnPooling, MaxPool2dMatchesTheFunctionalOp) {
  Tensor x = randn({2, 3, 7, 6});
  nn::MaxPool2d pool(2);  // stride defaults to the kernel
  EXPECT_EQ(pool.stride, (Pair{2, 2}));
  expect_close(pool.forward(x), max_pool2d(x, {2, 2}, {2, 2}), 0);
  nn::MaxPool2d strided(Pair{3, 2}, Pair{1, 2}, Pair{1, 0}, Pair{1, 1}, true);
  expect_close(strided.forward(x), max_pool2d(x, {3, 2}, {1, 2}, {1, 0}, {1, 1}, true), 0);
  EXPECT_EQ(pool.extra_repr(), "kernel_size=(2, 2), stride=(2, 2), padding=(0, 0), dilation=(1, 1), ceil_mode=false");
}

TEST(NnPooling, AvgPool2dMatchesTheFunctionalOp) {
  Tensor x = randn({2, 3, 6, 6});
  nn::AvgPool2d pool(3, 2, 1, false, false);
  expect_close(pool.forward(x), avg_pool2d(x, {3, 3}, {2, 2}, {1, 1}, false, false), 0);
  EXPECT_EQ(nn::AvgPool2d(2).forward(x).shape(), (Shape{2, 3, 3, 3}));
}

TEST(NnPooling, AdaptiveAvgPool2d) {
  Tensor x = randn({2, 4, 5, 7});
  nn::AdaptiveAvgPool2d pool(1);
  expect_close(pool.forward(x), adaptive_avg_pool2d(x, {1, 1}), 0);
  EXPECT_EQ(nn::AdaptiveAvgPool2d(Pair{2, 3}).forward(x).shape(), (Shape{2, 4, 2, 3}));
  EXPECT_THROW(nn::AdaptiveAvgPool2d(0), ValueError);
}

TEST(NnPooling, BadInputs) {
  nn::MaxPool2d pool(2);
  EXPECT_THROW(pool.forward(zeros({4, 4})), ShapeError);
  nn::MaxPool2d big(5);
  EXPECT_THROW(big.forward(zeros({1, 1, 3, 3})), ShapeError);
}

}  // namespace
}  // namespace hearth
