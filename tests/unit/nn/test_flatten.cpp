#include <gtest/gtest.h>

#include "hearth/nn/flatten.h"
#include "hearth/ops/factory.h"

namespace hearth {
namespace {

TEST(NnFlatten, KeepsTheBatchDimByDefault) {
  EXPECT_EQ(nn::Flatten().forward(zeros({2, 3, 4, 5})).shape(), (Shape{2, 60}));
  EXPECT_EQ(nn::Flatten(0).forward(zeros({2, 3, 4})).shape(), (Shape{24}));
  EXPECT_EQ(nn::Flatten(1, 2).forward(zeros({2, 3, 4, 5})).shape(), (Shape{2, 12, 5}));
  EXPECT_EQ(nn::Flatten().extra_repr(), "start_dim=1, end_dim=-1");
  EXPECT_ANY_THROW(nn::Flatten(3).forward(zeros({2, 3})));
}

}  // namespace
}  // namespace hearth
