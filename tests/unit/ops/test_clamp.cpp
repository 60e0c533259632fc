#include <cmath>

#include <gtest/gtest.h>

#include "hearth/autograd/grad_mode.h"
#include "tests/unit/ops/elementwise_testing.h"

namespace hearth {
namespace {

using test::grad_ok;
using test::leaf;
using test::throws_with;
using test::values_near;

TEST(Clamp, BothBoundsAndEachAlone) {
  Tensor x = tensor({-3.f, -1.f, 0.f, 0.5f, 2.f, 9.f});
  EXPECT_TRUE(values_near(clamp(x, -1, 1), {-1, -1, 0, 0.5, 1, 1}));
  EXPECT_TRUE(values_near(clamp_min(x, 0), {0, 0, 0, 0.5, 2, 9}));
  EXPECT_TRUE(values_near(clamp_max(x, 0.5), {-3, -1, 0, 0.5, 0.5, 0.5}));
  EXPECT_EQ(clamp(x, -1, 1).dtype(), DType::float32);
}

TEST(Clamp, NaNPassesAndCrossedBoundsGiveMax) {
  Tensor x = tensor({NAN, 0.f, 5.f});
  std::vector<float> y = clamp(x, -1, 1).to_vector<float>();
  EXPECT_TRUE(std::isnan(y[0]));
  EXPECT_TRUE(values_near(clamp(x, 2, 1), {NAN, 1, 1}));  // min > max: everything is max, as PyTorch
}

TEST(Clamp, TypePromotion) {
  Tensor i = tensor(std::vector<int64_t>{-5, 0, 5});
  EXPECT_EQ(clamp(i, -1, 1).dtype(), DType::int64);
  EXPECT_EQ(clamp(i, -1, 1).to_vector<int64_t>(), (std::vector<int64_t>{-1, 0, 1}));
  Tensor f = clamp(i, -0.5, 2);
  EXPECT_EQ(f.dtype(), DType::float32);
  EXPECT_TRUE(values_near(f, {-0.5, 0, 2}));
  EXPECT_EQ(clamp_max(i, 2.5).dtype(), DType::float32);
  Tensor u = tensor(std::vector<uint8_t>{0, 100, 250});
  EXPECT_EQ(clamp(u, 10, 200).to_vector<uint8_t>(), (std::vector<uint8_t>{10, 100, 200}));
  Tensor h = tensor({-2.f, 0.25f, 3.f}).to(DType::bfloat16);
  EXPECT_EQ(clamp(h, -1, 1).dtype(), DType::bfloat16);
  EXPECT_TRUE(values_near(clamp(h, -1, 1), {-1, 0.25, 1}));
  Tensor b = tensor(std::vector<bool>{true, false});
  EXPECT_EQ(clamp(b, 0, 1).dtype(), DType::int64);  // integer bounds promote bool, as in add
  EXPECT_EQ(clamp(b, 0, 1).to_vector<int64_t>(), (std::vector<int64_t>{1, 0}));
  EXPECT_TRUE(throws_with<TypeError>([&] { clamp(b, false, true); }, "[clamp]"));
}

TEST(Clamp, NonContiguousAndEmpty) {
  Tensor m = tensor(std::vector<double>{-2, 2, -0.5, 0.5}, {2, 2});
  EXPECT_TRUE(values_near(clamp(transpose(m, 0, 1), -1, 1), {-1, -0.5, 1, 0.5}));
  EXPECT_EQ(clamp(zeros({0, 4}), 0, 1).shape(), (Shape{0, 4}));
}

TEST(Clamp, InPlace) {
  Tensor x = tensor({-3.f, 0.f, 3.f});
  uint32_t v0 = x.version();
  EXPECT_TRUE(clamp_(x, -1, 2).is_same(x));
  EXPECT_TRUE(values_near(x, {-1, 0, 2}));
  EXPECT_GT(x.version(), v0);
  Tensor base = tensor(std::vector<float>{-5, 5, -5, 5}, {2, 2});
  clamp_(transpose(base, 0, 1), 0, 1);
  EXPECT_TRUE(values_near(base, {0, 1, 0, 1}));
}

TEST(Clamp, InPlaceRefusesAWiderResultType) {
  Tensor i = tensor(std::vector<int64_t>{1, 2});
  EXPECT_TRUE(throws_with<TypeError>([&] { clamp_(i, 0.5, 1.5); }, "can't be cast"));
  Tensor w = zeros({2}).requires_grad_();
  EXPECT_THROW(clamp_(w, 0, 1), AutogradError);
  NoGradGuard no_grad;
  clamp_(w, 0.5, 1);
  EXPECT_TRUE(values_near(w, {0.5, 0.5}));
}

TEST(Clamp, GradientFlowsInsideTheBoundsEndsIncluded) {
  Tensor x = tensor({-2.f, -1.f, 0.f, 1.f, 2.f}).requires_grad_();
  sum(clamp(x, -1, 1)).backward();
  EXPECT_TRUE(values_near(x.grad(), {0, 1, 1, 1, 0}));
  Tensor y = tensor({-2.f, 2.f}).requires_grad_();
  sum(add(clamp_min(y, 0), clamp_max(y, 0))).backward();
  EXPECT_TRUE(values_near(y.grad(), {1, 1}));
}

TEST(Clamp, Gradcheck) {
  // Values in (0.1, 0.9) and (1.1, 2.0) in magnitude: none sits on a bound.
  std::vector<double> v = {-1.9, -0.8, -0.3, 0.2, 0.7, 1.5, 1.2, -1.4};
  for (bool transposed : {false, true}) {
    Tensor x = leaf(v, {2, 4}, transposed);
    EXPECT_TRUE(grad_ok([](const std::vector<Tensor>& in) { return clamp(in[0], -1, 1); }, {x}));
    EXPECT_TRUE(grad_ok([](const std::vector<Tensor>& in) { return clamp_min(in[0], 0); }, {x}));
    EXPECT_TRUE(grad_ok([](const std::vector<Tensor>& in) { return clamp_max(in[0], 0.5); }, {x}));
  }
}

}  // namespace
}  // namespace hearth
