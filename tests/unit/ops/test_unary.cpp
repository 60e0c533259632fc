#include <cmath>
#include <cstdint>
#include <limits>

#include <gtest/gtest.h>

#include "tests/unit/ops/elementwise_testing.h"

namespace hearth {
namespace {

using test::bools;
using test::grad_ok;
using test::leaf;
using test::spread;
using test::throws_with;
using test::values_near;

std::vector<double> map_values(const std::vector<double>& x, double (*f)(double)) {
  std::vector<double> r;
  for (double v : x) r.push_back(f(v));
  return r;
}

const std::vector<double> kPositive = {0.25, 0.5, 1.0, 2.0, 3.5, 10.0};
const std::vector<double> kMixed = {-3.5, -1.0, -0.25, 0.5, 2.0, 7.0};

TEST(Unary, FloatValuesMatchLibm) {
  Tensor p = tensor(kPositive, {2, 3});
  Tensor m = tensor(kMixed, {2, 3});
  EXPECT_TRUE(values_near(exp(m), map_values(kMixed, [](double v) { return std::exp(v); }), 1e-12));
  EXPECT_TRUE(values_near(log(p), map_values(kPositive, [](double v) { return std::log(v); }), 1e-12));
  EXPECT_TRUE(values_near(sqrt(p), map_values(kPositive, [](double v) { return std::sqrt(v); }), 1e-12));
  EXPECT_TRUE(values_near(rsqrt(p), map_values(kPositive, [](double v) { return 1 / std::sqrt(v); }), 1e-12));
  EXPECT_TRUE(values_near(neg(m), map_values(kMixed, [](double v) { return -v; })));
  EXPECT_TRUE(values_near(abs(m), map_values(kMixed, [](double v) { return std::abs(v); })));
  EXPECT_TRUE(values_near(square(m), map_values(kMixed, [](double v) { return v * v; })));
  EXPECT_TRUE(values_near(sign(m), {-1, -1, -1, 1, 1, 1}));
  EXPECT_EQ(exp(m).shape(), (Shape{2, 3}));
  EXPECT_EQ(exp(m).dtype(), DType::float64);
}

TEST(Unary, Float32ComputesInFloat32) {
  Tensor x = tensor({0.5f, 1.5f, -2.0f});
  Tensor y = exp(x);
  EXPECT_EQ(y.dtype(), DType::float32);
  std::vector<float> v = y.to_vector<float>();
  EXPECT_FLOAT_EQ(v[0], std::exp(0.5f));
  EXPECT_FLOAT_EQ(v[2], std::exp(-2.0f));
}

TEST(Unary, SpecialValues) {
  const double inf = std::numeric_limits<double>::infinity(), nan = std::nan("");
  Tensor x = tensor(std::vector<double>{0.0, -1.0, inf, nan});
  EXPECT_TRUE(values_near(log(x), {-inf, nan, inf, nan}));
  EXPECT_TRUE(values_near(sqrt(x), {0.0, nan, inf, nan}));
  EXPECT_TRUE(values_near(rsqrt(x), {inf, nan, 0.0, nan}));
  EXPECT_TRUE(values_near(exp(tensor(std::vector<double>{-inf, 1000.0})), {0.0, inf}));
  EXPECT_TRUE(values_near(sign(x), {0, -1, 1, 0}));  // NaN's sign is 0, as in PyTorch
  EXPECT_TRUE(values_near(abs(tensor(std::vector<double>{-inf, nan, -0.0})), {inf, nan, 0.0}));
}

TEST(Unary, IntegerInputsKeepTheirDtypeForExactOps) {
  Tensor i = tensor(std::vector<int64_t>{-3, 0, 5});
  EXPECT_EQ(neg(i).to_vector<int64_t>(), (std::vector<int64_t>{3, 0, -5}));
  EXPECT_EQ(abs(i).to_vector<int64_t>(), (std::vector<int64_t>{3, 0, 5}));
  EXPECT_EQ(sign(i).to_vector<int64_t>(), (std::vector<int64_t>{-1, 0, 1}));
  EXPECT_EQ(square(i).to_vector<int64_t>(), (std::vector<int64_t>{9, 0, 25}));
  Tensor i32 = tensor(std::vector<int32_t>{-7, 2});
  EXPECT_EQ(abs(i32).dtype(), DType::int32);
  EXPECT_EQ(abs(i32).to_vector<int32_t>(), (std::vector<int32_t>{7, 2}));
  Tensor u = tensor(std::vector<uint8_t>{1, 0, 20});
  EXPECT_EQ(neg(u).to_vector<uint8_t>(), (std::vector<uint8_t>{255, 0, 236}));   // wraps, as torch's uint8
  EXPECT_EQ(square(u).to_vector<uint8_t>(), (std::vector<uint8_t>{1, 0, 144}));  // 400 mod 256
  EXPECT_EQ(sign(u).to_vector<uint8_t>(), (std::vector<uint8_t>{1, 0, 1}));
}

TEST(Unary, IntegerOverflowWrapsInsteadOfTrapping) {
  const int64_t lo = std::numeric_limits<int64_t>::min();
  EXPECT_EQ(neg(tensor(std::vector<int64_t>{lo})).to_vector<int64_t>()[0], lo);
  EXPECT_EQ(abs(tensor(std::vector<int64_t>{lo})).to_vector<int64_t>()[0], lo);
  EXPECT_EQ(square(tensor(std::vector<int32_t>{65536})).to_vector<int32_t>()[0], 0);
}

TEST(Unary, FloatOpsOnIntegersReturnFloat32) {
  Tensor i = tensor(std::vector<int64_t>{1, 4, 9});
  for (Tensor y : {exp(i), log(i), sqrt(i), rsqrt(i)}) EXPECT_EQ(y.dtype(), DType::float32);
  EXPECT_TRUE(values_near(sqrt(i), {1, 2, 3}));
  EXPECT_TRUE(values_near(rsqrt(i), {1, 0.5, 1.0 / 3}, 1e-6));
  Tensor b = tensor(std::vector<bool>{true, false});
  EXPECT_TRUE(values_near(exp(b), {std::exp(1.0), 1.0}, 1e-6));
  EXPECT_EQ(exp(b).dtype(), DType::float32);
}

TEST(Unary, HalfTypesComputeInFloatAndRoundOnce) {
  for (DType dt : {DType::bfloat16, DType::float16}) {
    Tensor x = tensor(kMixed, {6}).to(dt);
    Tensor y = exp(x);
    EXPECT_EQ(y.dtype(), dt);
    std::vector<double> xr = x.to_vector<double>();  // the rounded inputs
    std::vector<double> expected = map_values(xr, [](double v) { return std::exp(v); });
    double tol = dt == DType::bfloat16 ? 8e-3 : 1e-3;
    EXPECT_TRUE(values_near(y, expected, tol)) << dtype_name(dt);
    EXPECT_TRUE(values_near(abs(x), map_values(xr, [](double v) { return std::abs(v); })));
    EXPECT_TRUE(values_near(sqrt(abs(x)), map_values(xr, [](double v) { return std::sqrt(std::abs(v)); }), tol));
  }
}

TEST(Unary, NonContiguousInputsAreReadInLogicalOrder) {
  Tensor base = tensor(std::vector<double>{1, 2, 3, 4, 5, 6}, {2, 3});
  Tensor t = transpose(base, 0, 1);  // [[1, 4], [2, 5], [3, 6]]
  EXPECT_TRUE(values_near(square(t), {1, 16, 4, 25, 9, 36}));
  Tensor s = slice(base, 1, 0, 3, 2);  // [[1, 3], [4, 6]]
  EXPECT_TRUE(values_near(neg(s), {-1, -3, -4, -6}));
  Tensor e = expand(tensor(std::vector<double>{4.0}), {3});
  EXPECT_TRUE(values_near(sqrt(e), {2, 2, 2}));
}

TEST(Unary, EmptyAndZeroDimTensors) {
  Tensor e = zeros({0, 3});
  for (Tensor y : {neg(e), exp(e), sqrt(e), sign(e), square(e)}) EXPECT_EQ(y.shape(), (Shape{0, 3}));
  Tensor s = scalar_tensor(-4.0, DType::float64);
  EXPECT_EQ(abs(s).dim(), 0);
  EXPECT_EQ(abs(s).item<double>(), 4.0);
}

TEST(Unary, BoolInputs) {
  Tensor b = tensor(std::vector<bool>{true, false});
  EXPECT_TRUE(throws_with<TypeError>([&] { neg(b); }, "logical_not"));
  EXPECT_TRUE(throws_with<TypeError>([&] { abs(b); }, "[abs]"));
  EXPECT_EQ(test::bools(sign(b)), (std::vector<bool>{true, false}));
  EXPECT_EQ(square(b).dtype(), DType::int64);
  EXPECT_EQ(square(b).to_vector<int64_t>(), (std::vector<int64_t>{1, 0}));
}

TEST(Unary, UndefinedInputIsAValueError) {
  EXPECT_TRUE(throws_with<ValueError>([] { exp(Tensor()); }, "[exp]"));
  EXPECT_TRUE(throws_with<ValueError>([] { neg(Tensor()); }, "[neg]"));
}

TEST(Unary, TensorMethodsForward) {
  Tensor x = tensor({4.f, 9.f});
  EXPECT_TRUE(values_near(x.sqrt(), {2, 3}));
  EXPECT_TRUE(values_near(x.log(), {std::log(4.0), std::log(9.0)}, 1e-6));
  EXPECT_TRUE(values_near(x.exp(), {std::exp(4.0), std::exp(9.0)}, 1e-6));
  EXPECT_TRUE(values_near((-x).abs(), {4, 9}));
}

TEST(Unary, ManualGradients) {
  Tensor x = tensor({-2.f, 3.f}).requires_grad_();
  sum(add(add(abs(x), square(x)), neg(x))).backward();
  // sign(x) + 2x - 1
  EXPECT_TRUE(values_near(x.grad(), {-1 - 4 - 1, 1 + 6 - 1}));
  EXPECT_EQ(x.grad().dtype(), DType::float32);
}

TEST(Unary, GradcheckContiguousAndStrided) {
  for (bool transposed : {false, true}) {
    SCOPED_TRACE(transposed ? "transposed" : "contiguous");
    Tensor m = leaf(spread(6, 0.2, 2.0), {2, 3}, transposed);
    Tensor p = leaf(spread(6, 0.3, 3.0, false), {2, 3}, transposed);
    EXPECT_TRUE(grad_ok([](const std::vector<Tensor>& in) { return neg(in[0]); }, {m}));
    EXPECT_TRUE(grad_ok([](const std::vector<Tensor>& in) { return abs(in[0]); }, {m}));
    EXPECT_TRUE(grad_ok([](const std::vector<Tensor>& in) { return exp(in[0]); }, {m}));
    EXPECT_TRUE(grad_ok([](const std::vector<Tensor>& in) { return square(in[0]); }, {m}));
    EXPECT_TRUE(grad_ok([](const std::vector<Tensor>& in) { return sign(in[0]); }, {m}));
    EXPECT_TRUE(grad_ok([](const std::vector<Tensor>& in) { return log(in[0]); }, {p}));
    EXPECT_TRUE(grad_ok([](const std::vector<Tensor>& in) { return sqrt(in[0]); }, {p}));
    EXPECT_TRUE(grad_ok([](const std::vector<Tensor>& in) { return rsqrt(in[0]); }, {p}));
  }
}

using B = std::vector<bool>;

TEST(IsNanIsFinite, FloatsAndIntegers) {
  const float inf = std::numeric_limits<float>::infinity();
  Tensor x = tensor({1.f, NAN, inf, -inf});
  EXPECT_EQ(bools(isnan(x)), (B{false, true, false, false}));
  EXPECT_EQ(bools(isfinite(x)), (B{true, false, false, false}));
  Tensor h = x.to(DType::float16);
  EXPECT_EQ(bools(isnan(h)), (B{false, true, false, false}));
  EXPECT_EQ(bools(isfinite(h)), (B{true, false, false, false}));
  Tensor i = tensor(std::vector<int32_t>{1, 2});
  EXPECT_EQ(bools(isnan(i)), (B{false, false}));
  EXPECT_EQ(bools(isfinite(i)), (B{true, true}));
  EXPECT_EQ(isnan(zeros({0})).numel(), 0);
}

}  // namespace
}  // namespace hearth
