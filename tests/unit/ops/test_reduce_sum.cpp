#include <gtest/gtest.h>

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

Tensor arange6() { return tensor(std::vector<float>{1, 2, 3, 4, 5, 6}, {2, 3}); }

TEST(ReduceSum, AllDims) {
  Tensor s = sum(arange6());
  EXPECT_EQ(s.shape(), Shape{});
  EXPECT_TRUE(near(s, {21}));
  EXPECT_TRUE(near(arange6().sum(), {21}));
}

TEST(ReduceSum, SomeDimsAndKeepdim) {
  EXPECT_TRUE(near(sum(arange6(), {0}), {5, 7, 9}));
  EXPECT_TRUE(near(sum(arange6(), {1}), {6, 15}));
  Tensor k = sum(arange6(), {1}, /*keepdim=*/true);
  EXPECT_EQ(k.shape(), (Shape{2, 1}));
  EXPECT_TRUE(near(k, {6, 15}));
  Tensor x = red_test::seq({2, 3, 4});
  Tensor s = sum(x, {0, 2});
  EXPECT_EQ(s.shape(), Shape{3});
  EXPECT_TRUE(near(s, {60, 92, 124}));
}

TEST(ReduceSum, NegativeDims) {
  EXPECT_TRUE(near(sum(arange6(), {-1}), {6, 15}));
  EXPECT_TRUE(near(sum(arange6(), {-2, -1}), {21}));
}

TEST(ReduceSum, RepeatedOrBadDimIsAnError) {
  EXPECT_TRUE(throws_with<ValueError>([] { sum(arange6(), {1, -1}); }, "appears more than once"));
  EXPECT_TRUE(throws_with<ShapeError>([] { sum(arange6(), {2}); }, "dimension out of range"));
}

TEST(ReduceSum, NonContiguousInput) {
  Tensor t = transpose(arange6(), 0, 1);  // [[1,4],[2,5],[3,6]]
  EXPECT_TRUE(near(sum(t, {1}), {5, 7, 9}));
  EXPECT_TRUE(near(sum(red_test::strided_copy(arange6()), {1}), {6, 15}));
}

TEST(ReduceSum, EmptyTensors) {
  Tensor e = zeros({0, 3});
  EXPECT_TRUE(near(sum(e), {0}));
  EXPECT_TRUE(near(sum(e, {0}), {0, 0, 0}));
  EXPECT_EQ(sum(e, {1}).shape(), Shape{0});
  EXPECT_TRUE(std::isnan(mean(e).item<double>()));
  EXPECT_TRUE(near(mean(e, {0}), {NAN, NAN, NAN}));
}

TEST(ReduceSum, IntegerAndBoolSumToInt64) {
  Tensor i = tensor(std::vector<int32_t>{1, 2, 3, 4}, {2, 2});
  Tensor s = sum(i, {0});
  EXPECT_EQ(s.dtype(), DType::int64);
  EXPECT_EQ(s.to_vector<int64_t>(), (std::vector<int64_t>{4, 6}));
  Tensor b = tensor(std::vector<bool>{true, false, true}, {3});
  EXPECT_EQ(sum(b).dtype(), DType::int64);
  EXPECT_EQ(sum(b).item<int64_t>(), 2);
  Tensor big = full({3}, int64_t{1} << 40, DType::int64);
  EXPECT_EQ(sum(big).item<int64_t>(), int64_t{3} << 40);
}

TEST(ReduceSum, HalfTypesAccumulateAccurately) {
  for (DType dt : {DType::bfloat16, DType::float16}) {
    Tensor x = ones({4096}, dt);  // 4096 exceeds what a 16-bit accumulator could count to
    Tensor s = sum(x);
    EXPECT_EQ(s.dtype(), dt);
    EXPECT_EQ(s.item<double>(), 4096.0) << dtype_name(dt);
    EXPECT_TRUE(near(mean(reshape(ones({8}, dt), {2, 4}), {1}), {1, 1}));
  }
}

TEST(ReduceSum, LongRowIsExact) {
  Tensor x = ones({200000}, DType::float32);
  EXPECT_EQ(sum(x).item<double>(), 200000.0);
  EXPECT_DOUBLE_EQ(mean(x).item<double>(), 1.0);
}

TEST(ReduceSum, ZeroDimTensor) {
  Tensor x = scalar_tensor(3.5, DType::float64);
  EXPECT_TRUE(near(sum(x), {3.5}));
  EXPECT_TRUE(near(sum(x, {0}), {3.5}));
  EXPECT_TRUE(near(mean(x, {-1}), {3.5}));
}

TEST(ReduceMean, ValuesAndIntegerInputRefused) {
  EXPECT_TRUE(near(mean(arange6(), {1}), {2, 5}));
  EXPECT_TRUE(near(mean(arange6()), {3.5}));
  EXPECT_TRUE(throws_with<TypeError>([] { mean(tensor(std::vector<int64_t>{1, 2})); }, "floating-point"));
}

TEST(ReduceSum, Gradcheck) {
  for (bool nc : {false, true}) {
    Tensor x = random_leaf({3, 4}, nc);
    EXPECT_TRUE(grad_ok([](const std::vector<Tensor>& in) { return sum(in[0], {1}); }, {x}));
    EXPECT_TRUE(grad_ok([](const std::vector<Tensor>& in) { return sum(in[0], {0}, true); }, {x}));
    EXPECT_TRUE(grad_ok([](const std::vector<Tensor>& in) { return sum(in[0]); }, {x}));
    EXPECT_TRUE(grad_ok([](const std::vector<Tensor>& in) { return mean(in[0], {-1}); }, {x}));
    EXPECT_TRUE(grad_ok([](const std::vector<Tensor>& in) { return mean(in[0]); }, {x}));
  }
}

}  // namespace
}  // namespace hearth
