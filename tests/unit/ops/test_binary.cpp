#include <cstdint>

#include <gtest/gtest.h>

#include "hearth/autograd/grad_mode.h"
#include "tests/unit/ops/elementwise_testing.h"

namespace hearth {
namespace {

using test::grad_ok;
using test::leaf;
using test::throws_with;
using test::values_near;

TEST(Binary, ArithmeticWithBroadcasting) {
  Tensor a = tensor(std::vector<float>{1, 2, 3, 4, 5, 6}, {2, 3});
  Tensor b = tensor(std::vector<float>{10, 20, 30}, {3});
  Tensor c = tensor(std::vector<float>{2, 4}, {2, 1});
  EXPECT_TRUE(values_near(add(a, b), {11, 22, 33, 14, 25, 36}));
  EXPECT_TRUE(values_near(sub(a, b), {-9, -18, -27, -6, -15, -24}));
  EXPECT_TRUE(values_near(mul(a, c), {2, 4, 6, 16, 20, 24}));
  EXPECT_TRUE(values_near(div(a, c), {0.5, 1, 1.5, 1, 1.25, 1.5}));
  EXPECT_EQ(add(b, c).shape(), (Shape{2, 3}));  // [3] with [2, 1]
  EXPECT_TRUE(values_near(add(b, c), {12, 22, 32, 14, 24, 34}));
}

// add_ of a half tensor into a float32 one widens it in the kernel: exactly
// add_(a, cast(b, float32)), contiguous, broadcast and transposed.
TEST(Binary, InPlaceAddWidensAHalfOperand) {
  for (DType half : {DType::bfloat16, DType::float16}) {
    SCOPED_TRACE(dtype_name(half));
    const Tensor a = randn({6, 5});
    for (const Tensor& b : {randn({6, 5}).to(half), randn({5}).to(half), transpose(randn({5, 6}).to(half), 0, 1)}) {
      Tensor widened = a.clone(), plain = a.clone();
      add_(widened, b, 0.5);
      add_(plain, b.to(DType::float32), 0.5);
      EXPECT_EQ(widened.dtype(), DType::float32);
      EXPECT_EQ(widened.to_vector<float>(), plain.to_vector<float>());
    }
  }
}

TEST(Binary, Alpha) {
  Tensor a = tensor({1.f, 2.f});
  Tensor b = tensor({10.f, 20.f});
  EXPECT_TRUE(values_near(add(a, b, 0.5), {6, 12}));
  EXPECT_TRUE(values_near(sub(a, b, 2), {-19, -38}));
  Tensor i = tensor(std::vector<int64_t>{1, 2});
  EXPECT_EQ(add(i, i, 3).to_vector<int64_t>(), (std::vector<int64_t>{4, 8}));
}

TEST(Binary, ScalarOperandsAndOperators) {
  Tensor a = tensor({1.f, 2.f, 4.f});
  EXPECT_TRUE(values_near(add(a, 1), {2, 3, 5}));
  EXPECT_TRUE(values_near(sub(a, 1.5), {-0.5, 0.5, 2.5}));
  EXPECT_TRUE(values_near(mul(a, 3), {3, 6, 12}));
  EXPECT_TRUE(values_near(div(a, 2), {0.5, 1, 2}));
  EXPECT_TRUE(values_near(rsub(a, 10), {9, 8, 6}));
  EXPECT_TRUE(values_near(a + a * 2 - 1, {2, 5, 11}));
  EXPECT_TRUE(values_near(1 - a, {0, -1, -3}));
  EXPECT_TRUE(values_near(8 / a, {8, 4, 2}));
  EXPECT_TRUE(values_near(2 * a, {2, 4, 8}));
  EXPECT_TRUE(values_near(-a, {-1, -2, -4}));
  EXPECT_TRUE(values_near(a / a, {1, 1, 1}));
}

TEST(Binary, PromotionTable) {
  Tensor i = tensor(std::vector<int64_t>{1, 2});
  Tensor i32 = tensor(std::vector<int32_t>{1, 2});
  // int tensor with a float scalar: float32 (the scalar's default float), not float64.
  EXPECT_EQ(add(i, 0.5).dtype(), DType::float32);
  EXPECT_TRUE(values_near(add(i, 0.5), {1.5, 2.5}));
  // int tensor with an int scalar keeps its own width.
  EXPECT_EQ(mul(i32, int64_t{3}).dtype(), DType::int32);
  // A zero-dim float64 tensor lifts an integer tensor to float64 (higher category).
  EXPECT_EQ(add(i, scalar_tensor(0.5, DType::float64)).dtype(), DType::float64);
  // ... but not a float32 tensor (same category: dimensioned wins).
  EXPECT_EQ(add(tensor({1.f}), scalar_tensor(0.5, DType::float64)).dtype(), DType::float32);
  // bool + bool stays bool (logical or), as torch.
  Tensor t = tensor(std::vector<bool>{true, false, false});
  Tensor f = tensor(std::vector<bool>{true, true, false});
  Tensor s = add(t, f);
  EXPECT_EQ(s.dtype(), DType::bool_);
  EXPECT_EQ(test::bools(s), (std::vector<bool>{true, true, false}));
  EXPECT_EQ(test::bools(mul(t, f)), (std::vector<bool>{true, false, false}));
  // Integer division is true division into float32.
  Tensor q = div(tensor(std::vector<int64_t>{1, 7}), tensor(std::vector<int64_t>{2, 2}));
  EXPECT_EQ(q.dtype(), DType::float32);
  EXPECT_TRUE(values_near(q, {0.5, 3.5}));
  EXPECT_EQ(div(i, 2).dtype(), DType::float32);
  // Mixed integer widths and bool with numbers.
  EXPECT_EQ(add(tensor(std::vector<uint8_t>{1}), i32).dtype(), DType::int32);
  EXPECT_EQ(add(t, 1).dtype(), DType::int64);
  EXPECT_EQ(add(t, 1.0).dtype(), DType::float32);
  EXPECT_EQ(add(i, tensor({1.f, 2.f}).to(DType::bfloat16)).dtype(), DType::bfloat16);
  EXPECT_EQ(add(tensor({1.f}).to(DType::bfloat16), tensor({1.f}).to(DType::float16)).dtype(), DType::float32);
}

TEST(Binary, SubtractingBoolsIsATypeError) {
  Tensor t = tensor(std::vector<bool>{true});
  EXPECT_TRUE(throws_with<TypeError>([&] { sub(t, t); }, "logical_xor"));
}

TEST(Binary, HalfTypesRoundOnce) {
  for (DType dt : {DType::bfloat16, DType::float16}) {
    Tensor a = tensor({1.5f, -2.25f, 100.f}).to(dt);
    Tensor b = tensor({0.25f, 4.f, 0.5f}).to(dt);
    EXPECT_EQ(add(a, b).dtype(), dt);
    EXPECT_TRUE(values_near(add(a, b), {1.75, 1.75, 100.5}, dt == DType::bfloat16 ? 4e-3 : 1e-3)) << dtype_name(dt);
    EXPECT_TRUE(values_near(mul(a, b), {0.375, -9, 50})) << dtype_name(dt);
    EXPECT_TRUE(values_near(div(a, b), {6, -0.5625, 200})) << dtype_name(dt);
  }
}

TEST(Binary, NonContiguousOperands) {
  Tensor m = tensor(std::vector<double>{1, 2, 3, 4, 5, 6}, {2, 3});
  Tensor t = transpose(m, 0, 1);  // [[1, 4], [2, 5], [3, 6]]
  EXPECT_TRUE(values_near(add(t, t), {2, 8, 4, 10, 6, 12}));
  Tensor s = slice(m, 1, 0, 3, 2);  // [[1, 3], [4, 6]]
  EXPECT_TRUE(values_near(mul(s, tensor(std::vector<double>{10, 100}, {2})), {10, 300, 40, 600}));
  EXPECT_TRUE(values_near(sub(expand(tensor(std::vector<double>{1}), {3}), select(m, 0, 1)), {-3, -4, -5}));
}

TEST(Binary, EmptyAndZeroDim) {
  EXPECT_EQ(add(zeros({0, 3}), ones({3})).shape(), (Shape{0, 3}));
  Tensor s = add(scalar_tensor(2.0, DType::float64), scalar_tensor(3.0, DType::float64));
  EXPECT_EQ(s.dim(), 0);
  EXPECT_EQ(s.item<double>(), 5.0);
}

TEST(Binary, BadShapesAndDevicesNameTheOp) {
  EXPECT_TRUE(throws_with<ShapeError>([] { add(zeros({2, 3}), zeros({2})); }, "[add]"));
  EXPECT_TRUE(throws_with<ShapeError>([] { mul(zeros({4}), zeros({3})); }, "[mul]"));
  EXPECT_TRUE(throws_with<ValueError>([] { div(Tensor(), zeros({1})); }, "[div]"));
}

TEST(Binary, InPlace) {
  Tensor a = tensor({1.f, 2.f});
  uint32_t v0 = a.version();
  add_(a, tensor({1.f, 1.f}), 2);
  EXPECT_TRUE(values_near(a, {3, 4}));
  sub_(a, tensor(std::vector<float>{1}));
  EXPECT_TRUE(values_near(a, {2, 3}));
  mul_(a, tensor({2.f, 3.f}));
  EXPECT_TRUE(values_near(a, {4, 9}));
  mul_(a, 0.5);
  div_(a, 2);
  EXPECT_TRUE(values_near(a, {1, 2.25}));
  EXPECT_GT(a.version(), v0);
  a.add_(ones({2}));
  a.mul_(2);
  EXPECT_TRUE(values_near(a, {4, 6.5}));
  // The other operand is cast to the destination's dtype.
  Tensor i = tensor(std::vector<int64_t>{1, 2});
  add_(i, tensor({0.f, 1.f}));
  EXPECT_EQ(i.to_vector<int64_t>(), (std::vector<int64_t>{1, 3}));
  EXPECT_TRUE(throws_with<ShapeError>([&] { add_(a, zeros({2, 2})); }, "[add_]"));
  Tensor w = zeros({2}).requires_grad_();
  EXPECT_THROW(add_(w, ones({2})), AutogradError);
}

TEST(Binary, ManualGradients) {
  Tensor a = tensor({1.f, 2.f}).requires_grad_();
  Tensor b = tensor({3.f, 4.f}).requires_grad_();
  sum(add(div(a, b), mul(a, b))).backward();
  EXPECT_TRUE(values_near(a.grad(), {1.0 / 3 + 3, 1.0 / 4 + 4}, 1e-6));
  EXPECT_TRUE(values_near(b.grad(), {-1.0 / 9 + 1, -2.0 / 16 + 2}, 1e-6));
}

TEST(Binary, Gradcheck) {
  for (bool transposed : {false, true}) {
    SCOPED_TRACE(transposed ? "transposed" : "contiguous");
    Tensor a = leaf(test::spread(6, 0.5, 2), {2, 3}, transposed);
    Tensor b = leaf(test::spread(3, 0.5, 2), {1, 3}, transposed);
    EXPECT_TRUE(grad_ok([](const std::vector<Tensor>& in) { return add(in[0], in[1], 0.5); }, {a, b}));
    EXPECT_TRUE(grad_ok([](const std::vector<Tensor>& in) { return sub(in[0], in[1], 2); }, {a, b}));
    EXPECT_TRUE(grad_ok([](const std::vector<Tensor>& in) { return mul(in[0], in[1]); }, {a, b}));
    EXPECT_TRUE(grad_ok([](const std::vector<Tensor>& in) { return div(in[0], in[1]); }, {a, b}));
    EXPECT_TRUE(grad_ok([](const std::vector<Tensor>& in) { return rsub(in[0], 3); }, {a}));
  }
}

}  // namespace
}  // namespace hearth
