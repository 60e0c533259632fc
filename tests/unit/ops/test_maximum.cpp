#include <cmath>

#include <gtest/gtest.h>

#include "tests/unit/ops/elementwise_testing.h"

namespace hearth {
namespace {

using test::grad_ok;
using test::leaf;
using test::throws_with;
using test::values_near;

TEST(Maximum, ValuesWithBroadcasting) {
  Tensor a = tensor(std::vector<float>{1, 5, 3, 0, 2, 8}, {2, 3});
  Tensor b = tensor(std::vector<float>{2, 2, 2}, {3});
  EXPECT_TRUE(values_near(maximum(a, b), {2, 5, 3, 2, 2, 8}));
  EXPECT_TRUE(values_near(minimum(a, b), {1, 2, 2, 0, 2, 2}));
  EXPECT_EQ(maximum(a, b).shape(), (Shape{2, 3}));
}

TEST(Maximum, NaNPropagatesFromEitherSide) {
  Tensor a = tensor({NAN, 1.f, 2.f});
  Tensor b = tensor({0.f, NAN, 1.f});
  std::vector<float> mx = maximum(a, b).to_vector<float>();
  std::vector<float> mn = minimum(b, a).to_vector<float>();
  EXPECT_TRUE(std::isnan(mx[0]) && std::isnan(mx[1]));
  EXPECT_TRUE(std::isnan(mn[0]) && std::isnan(mn[1]));
  EXPECT_EQ(mx[2], 2.f);
  EXPECT_EQ(mn[2], 1.f);
}

TEST(Maximum, DtypesAndPromotion) {
  Tensor i = tensor(std::vector<int64_t>{-3, 7});
  Tensor j = tensor(std::vector<int64_t>{4, 4});
  EXPECT_EQ(maximum(i, j).dtype(), DType::int64);
  EXPECT_EQ(maximum(i, j).to_vector<int64_t>(), (std::vector<int64_t>{4, 7}));
  EXPECT_EQ(minimum(i, j).to_vector<int64_t>(), (std::vector<int64_t>{-3, 4}));
  Tensor f = tensor({0.5f, 10.f});
  EXPECT_EQ(maximum(i, f).dtype(), DType::float32);
  EXPECT_TRUE(values_near(maximum(i, f), {0.5, 10}));
  Tensor b1 = tensor(std::vector<bool>{true, false}), b2 = tensor(std::vector<bool>{false, false});
  EXPECT_EQ(test::bools(maximum(b1, b2)), (std::vector<bool>{true, false}));
  Tensor h = tensor({1.f, -2.f}).to(DType::bfloat16);
  EXPECT_TRUE(values_near(minimum(h, tensor({0.f, 0.f}).to(DType::bfloat16)), {0, -2}));
}

TEST(Maximum, NonContiguousEmptyAndBadShapes) {
  Tensor m = tensor(std::vector<double>{1, 4, 3, 2}, {2, 2});
  EXPECT_TRUE(values_near(maximum(m, transpose(m, 0, 1)), {1, 4, 4, 2}));
  EXPECT_EQ(minimum(zeros({0}), zeros({1})).shape(), (Shape{0}));
  EXPECT_TRUE(throws_with<ShapeError>([] { maximum(zeros({2}), zeros({3})); }, "[maximum]"));
}

TEST(Maximum, TiesSplitTheGradient) {
  Tensor a = tensor({1.f, 3.f, 2.f}).requires_grad_();
  Tensor b = tensor({2.f, 1.f, 2.f}).requires_grad_();
  sum(maximum(a, b)).backward();
  EXPECT_TRUE(values_near(a.grad(), {0, 1, 0.5}));
  EXPECT_TRUE(values_near(b.grad(), {1, 0, 0.5}));
  Tensor c = tensor({1.f, 3.f, 2.f}).requires_grad_();
  Tensor d = tensor(std::vector<float>{2.f}).requires_grad_();
  sum(minimum(c, d)).backward();
  EXPECT_TRUE(values_near(c.grad(), {1, 0, 0.5}));
  EXPECT_TRUE(values_near(d.grad(), {1.5}));  // broadcast: summed to shape [1]
}

TEST(Maximum, Gradcheck) {
  for (bool transposed : {false, true}) {
    SCOPED_TRACE(transposed ? "transposed" : "contiguous");
    Tensor a = leaf({-1.0, 0.3, 2.0, -0.7, 1.1, 0.05}, {2, 3}, transposed);
    Tensor b = leaf({0.5, -0.2, 1.0}, {1, 3}, transposed);
    EXPECT_TRUE(grad_ok([](const std::vector<Tensor>& in) { return maximum(in[0], in[1]); }, {a, b}));
    EXPECT_TRUE(grad_ok([](const std::vector<Tensor>& in) { return minimum(in[0], in[1]); }, {a, b}));
  }
}

}  // namespace
}  // namespace hearth
