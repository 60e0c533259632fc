#include <cmath>
#include <limits>

#include <gtest/gtest.h>

#include "tests/unit/ops/elementwise_testing.h"

namespace hearth {
namespace {

using test::grad_ok;
using test::leaf;
using test::spread;
using test::throws_with;
using test::values_near;

double ref_sigmoid(double x) { return 1 / (1 + std::exp(-x)); }
double ref_gelu(double x) { return 0.5 * x * (1 + std::erf(x / std::sqrt(2.0))); }
double ref_gelu_tanh(double x) { return 0.5 * x * (1 + std::tanh(std::sqrt(2 / M_PI) * (x + 0.044715 * x * x * x))); }

std::vector<double> map_values(const std::vector<double>& x, double (*f)(double)) {
  std::vector<double> r;
  for (double v : x) r.push_back(f(v));
  return r;
}

const std::vector<double> kX = {-4.0, -1.5, -0.5, 0.0, 0.25, 1.0, 2.5, 6.0};

TEST(Activation, ValuesMatchReferences) {
  Tensor x = tensor(kX, {2, 4});
  EXPECT_TRUE(values_near(relu(x), map_values(kX, [](double v) { return v > 0 ? v : 0.0; })));
  EXPECT_TRUE(values_near(sigmoid(x), map_values(kX, ref_sigmoid), 1e-12));
  EXPECT_TRUE(values_near(tanh(x), map_values(kX, [](double v) { return std::tanh(v); }), 1e-12));
  EXPECT_TRUE(values_near(silu(x), map_values(kX, [](double v) { return v * ref_sigmoid(v); }), 1e-12));
  EXPECT_TRUE(values_near(gelu(x), map_values(kX, ref_gelu), 1e-12));
  EXPECT_TRUE(values_near(gelu(x, "tanh"), map_values(kX, ref_gelu_tanh), 1e-12));
  EXPECT_EQ(gelu(x).shape(), (Shape{2, 4}));
}

TEST(Activation, KnownGeluValues) {
  Tensor one = tensor(std::vector<double>{1.0});
  EXPECT_NEAR(gelu(one).item<double>(), 0.8413447460685429, 1e-12);
  EXPECT_NEAR(gelu(one, "tanh").item<double>(), 0.8411919906082768, 1e-12);
}

TEST(Activation, SaturateWithoutNaN) {
  Tensor x = tensor({-1000.f, 1000.f});
  EXPECT_TRUE(values_near(sigmoid(x), {0, 1}));
  EXPECT_TRUE(values_near(tanh(x), {-1, 1}));
  EXPECT_TRUE(values_near(silu(x), {-0.0, 1000}));
  EXPECT_TRUE(values_near(gelu(x), {0, 1000}));
  EXPECT_TRUE(values_near(gelu(x, "tanh"), {0, 1000}));
}

TEST(Activation, ReluKeepsNaNAndIntegerDtypes) {
  EXPECT_TRUE(std::isnan(relu(tensor({NAN})).item<float>()));
  Tensor i = tensor(std::vector<int64_t>{-3, 0, 4});
  EXPECT_EQ(relu(i).dtype(), DType::int64);
  EXPECT_EQ(relu(i).to_vector<int64_t>(), (std::vector<int64_t>{0, 0, 4}));
  Tensor u = tensor(std::vector<uint8_t>{0, 200});
  EXPECT_EQ(relu(u).to_vector<uint8_t>(), (std::vector<uint8_t>{0, 200}));
  EXPECT_TRUE(throws_with<TypeError>([] { relu(tensor(std::vector<bool>{true})); }, "[relu]"));
}

TEST(Activation, IntegerInputs) {
  Tensor i = tensor(std::vector<int64_t>{0, 1});
  EXPECT_EQ(sigmoid(i).dtype(), DType::float32);
  EXPECT_TRUE(values_near(sigmoid(i), {0.5, ref_sigmoid(1)}, 1e-6));
  EXPECT_EQ(tanh(i).dtype(), DType::float32);
  // As in PyTorch, gelu and silu are defined for floating tensors only.
  EXPECT_TRUE(throws_with<TypeError>([&] { gelu(i); }, "[gelu]"));
  EXPECT_TRUE(throws_with<TypeError>([&] { silu(i); }, "[silu]"));
}

TEST(Activation, BadApproximateIsAValueError) {
  EXPECT_TRUE(throws_with<ValueError>([] { gelu(tensor({1.f}), "fast"); }, "\"fast\""));
}

TEST(Activation, HalfTypes) {
  for (DType dt : {DType::bfloat16, DType::float16}) {
    Tensor x = tensor(kX, {8}).to(dt);
    std::vector<double> xr = x.to_vector<double>();
    double tol = dt == DType::bfloat16 ? 8e-3 : 1e-3;
    EXPECT_TRUE(values_near(gelu(x), map_values(xr, ref_gelu), tol)) << dtype_name(dt);
    EXPECT_TRUE(values_near(sigmoid(x), map_values(xr, ref_sigmoid), tol)) << dtype_name(dt);
    EXPECT_TRUE(values_near(silu(x), map_values(xr, [](double v) { return v * ref_sigmoid(v); }), tol));
    EXPECT_TRUE(values_near(relu(x), map_values(xr, [](double v) { return v > 0 ? v : 0.0; })));
    EXPECT_EQ(gelu(x).dtype(), dt);
  }
}

TEST(Activation, HalfGradientsKeepTheDtype) {
  Tensor x = tensor(kX, {8}).to(DType::bfloat16).requires_grad_();
  sum(gelu(x)).backward();
  EXPECT_EQ(x.grad().dtype(), DType::bfloat16);
}

TEST(Activation, NonContiguousAndEmpty) {
  Tensor base = tensor(std::vector<double>{-1, 2, -3, 4, -5, 6}, {2, 3});
  EXPECT_TRUE(values_near(relu(transpose(base, 0, 1)), {0, 4, 2, 0, 0, 6}));
  EXPECT_TRUE(values_near(
      sigmoid(transpose(base, 0, 1)),
      {ref_sigmoid(-1), ref_sigmoid(4), ref_sigmoid(2), ref_sigmoid(-5), ref_sigmoid(-3), ref_sigmoid(6)}, 1e-12));
  for (Tensor y : {relu(zeros({0})), gelu(zeros({2, 0})), silu(zeros({0}))}) EXPECT_EQ(y.numel(), 0);
}

TEST(Activation, ReluGradientUsesTheOutputMask) {
  Tensor x = tensor({-1.f, 0.f, 2.f}).requires_grad_();
  sum(relu(x)).backward();
  EXPECT_TRUE(values_near(x.grad(), {0, 0, 1}));  // 0 at the kink, as PyTorch
}

// relu_backward is one op; its own gradient (in grad) is the same mask, so
// relu differentiates twice, and gradcheck holds for relu_backward in grad.
TEST(Activation, ReluBackwardIsTheMaskAndDifferentiable) {
  Tensor y = relu(tensor(std::vector<double>{-1.0, 0.0, 2.0, 3.5}));
  Tensor g = tensor(std::vector<double>{10.0, 20.0, 30.0, 40.0});
  EXPECT_TRUE(values_near(relu_backward(g, y), {0, 0, 30, 40}));
  Tensor gl = leaf(spread(4, 0.5, 2.0), {4}, false);
  EXPECT_TRUE(grad_ok([y](const std::vector<Tensor>& in) { return relu_backward(in[0], y); }, {gl}));
}

TEST(Activation, Gradcheck) {
  for (bool transposed : {false, true}) {
    SCOPED_TRACE(transposed ? "transposed" : "contiguous");
    Tensor x = leaf(spread(12, 0.1, 3.0), {3, 4}, transposed);
    EXPECT_TRUE(grad_ok([](const std::vector<Tensor>& in) { return relu(in[0]); }, {x}));
    EXPECT_TRUE(grad_ok([](const std::vector<Tensor>& in) { return sigmoid(in[0]); }, {x}));
    EXPECT_TRUE(grad_ok([](const std::vector<Tensor>& in) { return tanh(in[0]); }, {x}));
    EXPECT_TRUE(grad_ok([](const std::vector<Tensor>& in) { return silu(in[0]); }, {x}));
    EXPECT_TRUE(grad_ok([](const std::vector<Tensor>& in) { return gelu(in[0]); }, {x}));
    EXPECT_TRUE(grad_ok([](const std::vector<Tensor>& in) { return gelu(in[0], "tanh"); }, {x}));
  }
}

}  // namespace
}  // namespace hearth
