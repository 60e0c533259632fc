#include <gtest/gtest.h>

#include <cmath>
#include <limits>

#include "hearth/ops/elementwise.h"
#include "hearth/ops/reduction.h"
#include "tests/unit/ops/reduction_testing.h"

namespace hearth {
namespace {

using red_test::grad_ok;
using red_test::near;
using red_test::random_leaf;
using red_test::throws_with;

// [[1, 2, 3, 4], [2, 4, 6, 8]]: row variances (unbiased) 5/3 and 20/3.
Tensor sample(DType dt = DType::float64) {
  return cast(tensor(std::vector<double>{1, 2, 3, 4, 2, 4, 6, 8}, {2, 4}), dt);
}

TEST(ReduceVar, UnbiasedAndBiased) {
  EXPECT_TRUE(near(var(sample(), {1}), {5.0 / 3, 20.0 / 3}));
  EXPECT_TRUE(near(var(sample(), {1}, /*correction=*/0), {1.25, 5.0}));
  EXPECT_TRUE(near(std(sample(), {1}), {std::sqrt(5.0 / 3), std::sqrt(20.0 / 3)}));
  EXPECT_TRUE(near(std(sample(), {-1}, 0, /*keepdim=*/true), {std::sqrt(1.25), std::sqrt(5.0)}));
  EXPECT_EQ(std(sample(), {-1}, 0, true).shape(), (Shape{2, 1}));
}

TEST(ReduceVar, AllDimsAndSomeDims) {
  // all eight values: mean 3.75, sum of squared deviations 37.5
  EXPECT_TRUE(near(var(sample()), {37.5 / 7}));
  EXPECT_TRUE(near(var(sample(), {0}), {0.5, 2, 4.5, 8}));
  Tensor x = red_test::seq({2, 3, 2}, DType::float64);
  // over dims 0 and 2 for j: {2j, 2j+1, 6+2j, 7+2j}, variance (unbiased) of {0,1,6,7} = 37/3
  EXPECT_TRUE(near(var(x, {0, 2}), {37.0 / 3, 37.0 / 3, 37.0 / 3}));
}

TEST(ReduceVar, StableForLargeOffsets) {
  // A naive E[x^2] - E[x]^2 loses every digit here; two passes in double do not.
  Tensor x = tensor(std::vector<double>{1e9 + 1, 1e9 + 2, 1e9 + 3}, {3});
  EXPECT_TRUE(near(var(x), {1.0}, 1e-9));
  Tensor f = cast(tensor(std::vector<double>{10000.5, 10001.5, 10002.5, 10003.5}, {4}), DType::float32);
  EXPECT_TRUE(near(var(f, {}, 0), {1.25}, 1e-6));
}

TEST(ReduceVar, HalfTypesAndNonContiguous) {
  for (DType dt : {DType::float32, DType::bfloat16, DType::float16}) {
    Tensor v = var(sample(dt), {1});
    EXPECT_EQ(v.dtype(), dt);
    EXPECT_TRUE(near(v, {5.0 / 3, 20.0 / 3}, 1e-2)) << dtype_name(dt);
  }
  EXPECT_TRUE(near(var(transpose(sample(), 0, 1), {0}), {5.0 / 3, 20.0 / 3}));
  EXPECT_TRUE(near(var(red_test::strided_copy(sample()), {1}), {5.0 / 3, 20.0 / 3}));
}

TEST(ReduceVar, TooFewElementsGiveNanOrInf) {
  EXPECT_TRUE(std::isnan(var(tensor(std::vector<double>{4.0})).item<double>()));
  EXPECT_TRUE(near(var(tensor(std::vector<double>{4.0}), {}, 0), {0}));
  EXPECT_TRUE(std::isnan(var(zeros({0}, DType::float64)).item<double>()));
  EXPECT_TRUE(std::isinf(var(tensor(std::vector<double>{1.0, 3.0}), {}, 2).item<double>()));
  EXPECT_EQ(var(zeros({0, 3}), {0}).shape(), Shape{3});
}

TEST(ReduceVar, BadInput) {
  EXPECT_TRUE(throws_with<TypeError>([] { var(tensor(std::vector<int64_t>{1, 2})); }, "[var]"));
  EXPECT_TRUE(throws_with<TypeError>([] { std(tensor(std::vector<int64_t>{1, 2})); }, "[std]"));
  EXPECT_TRUE(throws_with<ShapeError>([] { var(sample(), {3}); }, "dimension out of range"));
}

TEST(ReduceVar, Gradcheck) {
  for (bool nc : {false, true}) {
    Tensor x = random_leaf({3, 4}, nc);
    EXPECT_TRUE(grad_ok([](const std::vector<Tensor>& in) { return var(in[0], {1}); }, {x}));
    EXPECT_TRUE(grad_ok([](const std::vector<Tensor>& in) { return var(in[0], {0}, 0, true); }, {x}));
    EXPECT_TRUE(grad_ok([](const std::vector<Tensor>& in) { return var(in[0]); }, {x}));
    EXPECT_TRUE(grad_ok([](const std::vector<Tensor>& in) { return std(in[0], {1}); }, {x}));
    EXPECT_TRUE(grad_ok([](const std::vector<Tensor>& in) { return std(in[0], {}, 0); }, {x}));
  }
}

}  // namespace
}  // namespace hearth
