#include <cmath>

#include <gtest/gtest.h>

#include "tests/unit/ops/elementwise_testing.h"

namespace hearth {
namespace {

using test::grad_ok;
using test::leaf;
using test::throws_with;
using test::values_near;

TEST(Pow, TensorExponentWithBroadcasting) {
  Tensor a = tensor(std::vector<double>{1, 2, 3, 4, 5, 6}, {2, 3});
  Tensor b = tensor(std::vector<double>{2, 0.5, -1}, {3});
  Tensor y = pow(a, b);
  EXPECT_EQ(y.shape(), (Shape{2, 3}));
  EXPECT_TRUE(values_near(y, {1, std::sqrt(2.0), 1.0 / 3, 16, std::sqrt(5.0), 1.0 / 6}, 1e-12));
}

TEST(Pow, ScalarExponents) {
  Tensor a = tensor({4.f, 9.f});
  EXPECT_TRUE(values_near(pow(a, 2), {16, 81}));
  EXPECT_TRUE(values_near(pow(a, 0.5), {2, 3}));
  EXPECT_TRUE(values_near(pow(a, -1), {0.25, 1.0 / 9}));
  EXPECT_TRUE(values_near(pow(a, 0), {1, 1}));
  EXPECT_TRUE(values_near(a.pow(3), {64, 729}));
  EXPECT_EQ(pow(a, 2).dtype(), DType::float32);
  EXPECT_TRUE(std::isnan(pow(tensor({-8.f}), 1.0 / 3).item<float>()));  // real pow of a negative base
}

TEST(Pow, IntegerPowersStayIntegers) {
  Tensor i = tensor(std::vector<int64_t>{2, 3, -2, 0});
  Tensor y = pow(i, 3);
  EXPECT_EQ(y.dtype(), DType::int64);
  EXPECT_EQ(y.to_vector<int64_t>(), (std::vector<int64_t>{8, 27, -8, 0}));
  EXPECT_EQ(pow(i, 0).to_vector<int64_t>(), (std::vector<int64_t>{1, 1, 1, 1}));
  // Negative exponents in a tensor truncate as integer division does.
  Tensor base = tensor(std::vector<int32_t>{1, -1, -1, 2, 5});
  Tensor e = tensor(std::vector<int32_t>{-1, -3, -2, -2, 2});
  EXPECT_EQ(pow(base, e).to_vector<int32_t>(), (std::vector<int32_t>{1, -1, 1, 0, 25}));
  // Large powers wrap instead of being undefined.
  EXPECT_EQ(pow(tensor(std::vector<uint8_t>{16, 3}), 2).dtype(), DType::uint8);
  EXPECT_EQ(pow(tensor(std::vector<uint8_t>{16, 3}), 2).to_vector<uint8_t>(), (std::vector<uint8_t>{0, 9}));
}

TEST(Pow, TypePromotion) {
  Tensor i = tensor(std::vector<int64_t>{4, 9});
  EXPECT_EQ(pow(i, 0.5).dtype(), DType::float32);
  EXPECT_TRUE(values_near(pow(i, 0.5), {2, 3}));
  Tensor f = tensor({2.f, 3.f});
  EXPECT_EQ(pow(f, scalar_tensor(2.0, DType::float64)).dtype(), DType::float32);  // zero-dim of the same kind
  EXPECT_EQ(pow(i, tensor({1.f, 2.f})).dtype(), DType::float32);
  EXPECT_EQ(pow(f, tensor(std::vector<double>{1, 2})).dtype(), DType::float64);
  Tensor b = tensor(std::vector<bool>{true, false});
  EXPECT_EQ(pow(b, 2).dtype(), DType::int64);
  EXPECT_EQ(pow(b, 2).to_vector<int64_t>(), (std::vector<int64_t>{1, 0}));
  Tensor h = tensor({1.5f, 2.f}).to(DType::float16);
  EXPECT_EQ(pow(h, 2).dtype(), DType::float16);
  EXPECT_TRUE(values_near(pow(h, 2), {2.25, 4}));
}

TEST(Pow, BadInputs) {
  Tensor i = tensor(std::vector<int64_t>{2});
  EXPECT_TRUE(throws_with<ValueError>([&] { pow(i, -1); }, "negative integer powers"));
  Tensor b = tensor(std::vector<bool>{true});
  EXPECT_TRUE(throws_with<TypeError>([&] { pow(b, b); }, "[pow]"));
  EXPECT_TRUE(throws_with<ShapeError>([] { pow(zeros({2}), zeros({3})); }, "[pow]"));
}

TEST(Pow, NonContiguousAndEmpty) {
  Tensor m = tensor(std::vector<double>{1, 2, 3, 4}, {2, 2});
  EXPECT_TRUE(values_near(pow(transpose(m, 0, 1), m), {1, 9, 8, 256}));
  EXPECT_EQ(pow(zeros({0, 2}), 2).shape(), (Shape{0, 2}));
}

TEST(Pow, GradientsAtZeroBase) {
  // d/db a^b at a = 0 is taken as 0 for b >= 0 (not 0 * log 0 = NaN); d/da 0^2 = 0.
  Tensor a = tensor({0.f, 2.f}).requires_grad_();
  Tensor b = tensor({2.f, 2.f}).requires_grad_();
  sum(pow(a, b)).backward();
  EXPECT_TRUE(values_near(a.grad(), {0, 4}));
  EXPECT_TRUE(values_near(b.grad(), {0, 4 * std::log(2.0)}, 1e-6));
  Tensor z = tensor({0.f, 3.f}).requires_grad_();
  sum(pow(z, 0)).backward();
  EXPECT_TRUE(values_near(z.grad(), {0, 0}));
}

TEST(Pow, Gradcheck) {
  for (bool transposed : {false, true}) {
    SCOPED_TRACE(transposed ? "transposed" : "contiguous");
    Tensor a = leaf(test::spread(6, 0.5, 2.0, false), {2, 3}, transposed);
    Tensor b = leaf(test::spread(3, 0.2, 2.5), {1, 3}, transposed);
    EXPECT_TRUE(grad_ok([](const std::vector<Tensor>& in) { return pow(in[0], in[1]); }, {a, b}));
    EXPECT_TRUE(grad_ok([](const std::vector<Tensor>& in) { return pow(in[0], 3); }, {a}));
    EXPECT_TRUE(grad_ok([](const std::vector<Tensor>& in) { return pow(in[0], -1.5); }, {a}));
    EXPECT_TRUE(grad_ok([](const std::vector<Tensor>& in) { return pow(in[0], 0.5); }, {a}));
  }
  Tensor m = leaf(test::spread(6, 0.3, 2.0), {2, 3});  // negative bases with an integer exponent
  EXPECT_TRUE(grad_ok([](const std::vector<Tensor>& in) { return pow(in[0], 2); }, {m}));
}

}  // namespace
}  // namespace hearth
