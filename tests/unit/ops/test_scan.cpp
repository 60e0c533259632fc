#include <gtest/gtest.h>

#include "hearth/ops/elementwise.h"
#include "hearth/ops/reduction.h"
#include "tests/unit/ops/reduction_testing.h"

namespace hearth {
namespace {

using red_test::grad_ok;
using red_test::near;
using red_test::random_leaf;
using red_test::throws_with;

TEST(Cumsum, AlongEachDim) {
  Tensor x = red_test::seq({2, 3});  // [[0,1,2],[3,4,5]]
  EXPECT_TRUE(near(cumsum(x, 1), {0, 1, 3, 3, 7, 12}));
  EXPECT_TRUE(near(cumsum(x, 0), {0, 1, 2, 3, 5, 7}));
  EXPECT_TRUE(near(cumsum(x, -1), {0, 1, 3, 3, 7, 12}));
  Tensor y = red_test::seq({2, 2, 2});
  EXPECT_TRUE(near(cumsum(y, 1), {0, 1, 2, 4, 4, 5, 10, 12}));
  EXPECT_EQ(cumsum(y, 1).shape(), (Shape{2, 2, 2}));
}

TEST(Cumsum, NonContiguousInput) {
  Tensor x = transpose(red_test::seq({2, 3}), 0, 1);  // [[0,3],[1,4],[2,5]]
  EXPECT_TRUE(near(cumsum(x, 0), {0, 3, 1, 7, 3, 12}));
  EXPECT_TRUE(near(cumsum(red_test::strided_copy(red_test::seq({2, 3})), 1), {0, 1, 3, 3, 7, 12}));
}

TEST(Cumsum, IntegersAndBoolGiveInt64) {
  Tensor i = tensor(std::vector<int32_t>{1, 2, 3}, {3});
  Tensor c = cumsum(i, 0);
  EXPECT_EQ(c.dtype(), DType::int64);
  EXPECT_EQ(c.to_vector<int64_t>(), (std::vector<int64_t>{1, 3, 6}));
  Tensor b = tensor(std::vector<bool>{true, false, true}, {3});
  EXPECT_EQ(cumsum(b, 0).to_vector<int64_t>(), (std::vector<int64_t>{1, 1, 2}));
}

TEST(Cumsum, HalfTypesAccumulateAccurately) {
  for (DType dt : {DType::bfloat16, DType::float16}) {
    Tensor c = cumsum(ones({1000}, dt), 0);
    EXPECT_EQ(c.dtype(), dt);
    // 1000 is exact in both types; a 16-bit running sum would have stalled long before.
    EXPECT_EQ(select(c, 0, 999).item<double>(), 1000.0) << dtype_name(dt);
  }
}

TEST(Cumsum, WideAndLongShapes) {
  Tensor x = ones({3, 1000});  // columns beyond one block of the kernel
  Tensor c = cumsum(x, 0);
  EXPECT_TRUE(near(select(c, 1, 999), {1, 2, 3}));
  Tensor l = cumsum(ones({5000}, DType::float64), 0);
  EXPECT_EQ(select(l, 0, 4999).item<double>(), 5000.0);
}

TEST(Cumsum, EmptyAndZeroDim) {
  EXPECT_EQ(cumsum(zeros({0, 3}), 0).shape(), (Shape{0, 3}));
  EXPECT_EQ(cumsum(zeros({2, 0}), 1).shape(), (Shape{2, 0}));
  Tensor s = cumsum(scalar_tensor(4.0, DType::float64), 0);
  EXPECT_EQ(s.shape(), Shape{});
  EXPECT_TRUE(near(s, {4}));
}

TEST(Cumsum, BadDim) {
  EXPECT_TRUE(throws_with<ShapeError>([] { cumsum(zeros({2, 3}), 2); }, "[cumsum] dimension out of range"));
}

TEST(Cumsum, GradientIsReverseCumsum) {
  Tensor x = tensor(std::vector<double>{1, 2, 3, 4}, {4}).requires_grad_();
  Tensor w = tensor(std::vector<double>{1, 10, 100, 1000}, {4});
  sum(mul(cumsum(x, 0), w)).backward();
  EXPECT_TRUE(near(x.grad(), {1111, 1110, 1100, 1000}));
}

TEST(Cumsum, Gradcheck) {
  for (bool nc : {false, true}) {
    Tensor x = random_leaf({3, 4}, nc);
    for (int64_t d : {0, 1, -1})
      EXPECT_TRUE(grad_ok([d](const std::vector<Tensor>& in) { return cumsum(in[0], d); }, {x}));
  }
  Tensor y = random_leaf({2, 3, 2}, true);
  EXPECT_TRUE(grad_ok([](const std::vector<Tensor>& in) { return cumsum(in[0], 1); }, {y}));
}

}  // namespace
}  // namespace hearth
