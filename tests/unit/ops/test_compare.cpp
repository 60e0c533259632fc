#include <cmath>
#include <limits>

#include <gtest/gtest.h>

#include "tests/unit/ops/elementwise_testing.h"

namespace hearth {
namespace {

using test::bools;
using test::throws_with;

using B = std::vector<bool>;

TEST(Compare, TensorTensorWithBroadcasting) {
  Tensor a = tensor(std::vector<float>{1, 2, 3, 4, 5, 6}, {2, 3});
  Tensor b = tensor(std::vector<float>{2, 2, 5}, {3});
  EXPECT_EQ(bools(eq(a, b)), (B{false, true, false, false, false, false}));
  EXPECT_EQ(bools(ne(a, b)), (B{true, false, true, true, true, true}));
  EXPECT_EQ(bools(lt(a, b)), (B{true, false, true, false, false, false}));
  EXPECT_EQ(bools(le(a, b)), (B{true, true, true, false, false, false}));
  EXPECT_EQ(bools(gt(a, b)), (B{false, false, false, true, true, true}));
  EXPECT_EQ(bools(ge(a, b)), (B{false, true, false, true, true, true}));
  EXPECT_EQ(eq(a, b).shape(), (Shape{2, 3}));
  Tensor col = tensor(std::vector<float>{1, 5}, {2, 1});
  EXPECT_EQ(gt(col, b).shape(), (Shape{2, 3}));
  EXPECT_EQ(bools(gt(col, b)), (B{false, false, false, true, true, false}));
}

TEST(Compare, ScalarOperands) {
  Tensor a = tensor({1.f, 2.f, 3.f});
  EXPECT_EQ(bools(eq(a, 2)), (B{false, true, false}));
  EXPECT_EQ(bools(ne(a, 2.0)), (B{true, false, true}));
  EXPECT_EQ(bools(lt(a, 2)), (B{true, false, false}));
  EXPECT_EQ(bools(le(a, 2)), (B{true, true, false}));
  EXPECT_EQ(bools(gt(a, 2)), (B{false, false, true}));
  EXPECT_EQ(bools(ge(a, 2)), (B{false, true, true}));
}

TEST(Compare, OperandsArePromotedBeforeComparing) {
  Tensor i = tensor(std::vector<int64_t>{1, 2});
  // 1.5 is not truncated to 1: the integers are compared as floats.
  EXPECT_EQ(bools(eq(i, 1.5)), (B{false, false}));
  EXPECT_EQ(bools(lt(i, 1.5)), (B{true, false}));
  EXPECT_EQ(bools(eq(i, tensor({1.f, 2.5f}))), (B{true, false}));
  Tensor u = tensor(std::vector<uint8_t>{0, 255});
  EXPECT_EQ(bools(gt(u, tensor(std::vector<int32_t>{-1, 300}))), (B{true, false}));
  Tensor b = tensor(std::vector<bool>{true, false});
  EXPECT_EQ(bools(eq(b, 1)), (B{true, false}));
}

TEST(Compare, NaNComparesFalseExceptNe) {
  Tensor x = tensor({NAN, 1.f});
  EXPECT_EQ(bools(eq(x, x)), (B{false, true}));
  EXPECT_EQ(bools(ne(x, x)), (B{true, false}));
  EXPECT_EQ(bools(lt(x, 5)), (B{false, true}));
  EXPECT_EQ(bools(ge(x, 0)), (B{false, true}));
}

TEST(Compare, EveryDtype) {
  for (DType dt :
       {DType::float32, DType::float64, DType::bfloat16, DType::float16, DType::int64, DType::int32, DType::uint8}) {
    Tensor a = tensor({1.f, 2.f, 3.f}).to(dt);
    Tensor b = tensor({3.f, 2.f, 1.f}).to(dt);
    EXPECT_EQ(bools(lt(a, b)), (B{true, false, false})) << dtype_name(dt);
    EXPECT_EQ(bools(eq(a, b)), (B{false, true, false})) << dtype_name(dt);
  }
}

TEST(Compare, NonContiguousAndEmpty) {
  Tensor m = tensor(std::vector<double>{1, 2, 3, 4}, {2, 2});
  EXPECT_EQ(bools(eq(transpose(m, 0, 1), m)), (B{true, false, false, true}));
  EXPECT_EQ(eq(zeros({0, 2}), zeros({2})).shape(), (Shape{0, 2}));
}

TEST(Compare, ResultsCarryNoGradient) {
  Tensor x = tensor({1.f, 2.f}).requires_grad_();
  Tensor c = gt(x, 1);
  EXPECT_EQ(c.dtype(), DType::bool_);
  EXPECT_FALSE(c.requires_grad());
}

TEST(Compare, BadShapesNameTheOp) {
  EXPECT_TRUE(throws_with<ShapeError>([] { lt(zeros({2, 3}), zeros({4})); }, "[lt]"));
  EXPECT_TRUE(throws_with<ValueError>([] { eq(Tensor(), zeros({1})); }, "[eq]"));
}

TEST(Logical, TruthOfAnyDtype) {
  Tensor f = tensor({0.f, 2.f, NAN, 0.f});
  Tensor i = tensor(std::vector<int64_t>{1, 0, 3, 0});
  EXPECT_EQ(bools(logical_and(f, i)), (B{false, false, true, false}));
  EXPECT_EQ(bools(logical_or(f, i)), (B{true, true, true, false}));
  EXPECT_EQ(bools(logical_xor(f, i)), (B{true, true, false, false}));
  EXPECT_EQ(bools(logical_not(f)), (B{true, false, false, true}));
  EXPECT_EQ(bools(logical_not(i)), (B{false, true, false, true}));
  Tensor b = tensor(std::vector<bool>{true, false});
  EXPECT_EQ(bools(logical_not(b)), (B{false, true}));
  EXPECT_EQ(bools(logical_and(b, tensor(std::vector<bool>{true}))), (B{true, false}));
}

TEST(Logical, Broadcasting) {
  Tensor r = tensor(std::vector<bool>{true, false}, {2, 1});
  Tensor c = tensor(std::vector<bool>{true, false, true}, {3});
  EXPECT_EQ(logical_or(r, c).shape(), (Shape{2, 3}));
  EXPECT_EQ(bools(logical_or(r, c)), (B{true, true, true, true, false, true}));
}

}  // namespace
}  // namespace hearth
