// nn::init: gains, fans, and the statistics of each fill over large tensors.
#include <cmath>

#include <gtest/gtest.h>

#include "hearth/core/generator.h"
#include "hearth/nn/init.h"
#include "hearth/ops/factory.h"
#include "tests/unit/nn/nn_testing.h"

namespace hearth {
namespace {

namespace init = nn::init;
using testing::moments_of;

TEST(NnInit, CalculateGain) {
  EXPECT_DOUBLE_EQ(init::calculate_gain("linear"), 1.0);
  EXPECT_DOUBLE_EQ(init::calculate_gain("conv2d"), 1.0);
  EXPECT_DOUBLE_EQ(init::calculate_gain("sigmoid"), 1.0);
  EXPECT_DOUBLE_EQ(init::calculate_gain("tanh"), 5.0 / 3.0);
  EXPECT_DOUBLE_EQ(init::calculate_gain("relu"), std::sqrt(2.0));
  EXPECT_DOUBLE_EQ(init::calculate_gain("leaky_relu"), std::sqrt(2.0 / (1 + 0.01 * 0.01)));
  EXPECT_DOUBLE_EQ(init::calculate_gain("leaky_relu", std::sqrt(5.0)), std::sqrt(1.0 / 3.0));
  EXPECT_DOUBLE_EQ(init::calculate_gain("selu"), 0.75);
  EXPECT_THROW(init::calculate_gain("softplus"), ValueError);
}

TEST(NnInit, FanInAndFanOut) {
  EXPECT_EQ(init::calculate_fan_in_and_fan_out(empty({7, 5})), (std::pair<int64_t, int64_t>{5, 7}));
  EXPECT_EQ(init::calculate_fan_in_and_fan_out(empty({8, 4, 3, 3})), (std::pair<int64_t, int64_t>{36, 72}));
  EXPECT_THROW(init::calculate_fan_in_and_fan_out(empty({5})), ShapeError);
}

TEST(NnInit, UniformAndNormal) {
  manual_seed(1);
  Tensor t = empty({200, 500});
  auto m = moments_of(init::uniform_(t, -2.0, 4.0));
  EXPECT_NEAR(m.mean, 1.0, 0.02);
  EXPECT_NEAR(m.std, 6.0 / std::sqrt(12.0), 0.02);
  EXPECT_GE(m.min, -2.0);
  EXPECT_LT(m.max, 4.0);
  m = moments_of(init::normal_(t, 3.0, 0.5));
  EXPECT_NEAR(m.mean, 3.0, 0.005);
  EXPECT_NEAR(m.std, 0.5, 0.005);
}

TEST(NnInit, TruncNormalStaysInBoundsWithTheTruncatedMoments) {
  manual_seed(2);
  Tensor t = empty({100000}, DType::float64);
  auto m = moments_of(init::trunc_normal_(t, 0.0, 1.0, -2.0, 2.0));
  EXPECT_GE(m.min, -2.0);
  EXPECT_LE(m.max, 2.0);
  EXPECT_NEAR(m.mean, 0.0, 0.01);
  // Variance of N(0, 1) truncated to [-2, 2]: 1 - 2 * 2 phi(2) / (Phi(2) - Phi(-2)).
  const double phi2 = std::exp(-2.0) / std::sqrt(2 * M_PI);
  const double z = std::erf(2.0 / std::sqrt(2.0));
  EXPECT_NEAR(m.std, std::sqrt(1.0 - 4.0 * phi2 / z), 0.01);
  // One-sided, far from the mean: every value lands in [1, 3].
  Tensor u = empty({20000});
  m = moments_of(init::trunc_normal_(u, 0.0, 0.5, 1.0, 3.0));
  EXPECT_GE(m.min, 1.0);
  EXPECT_LE(m.max, 3.0);
  EXPECT_LT(m.mean, 1.3);  // mass piles up near the lower bound
  EXPECT_THROW(init::trunc_normal_(u, 0.0, 1.0, 2.0, 1.0), ValueError);
  EXPECT_THROW(init::trunc_normal_(u, 0.0, 0.0), ValueError);
}

TEST(NnInit, TruncNormalFollowsTheSeed) {
  manual_seed(5);
  Tensor a = init::trunc_normal_(empty({64}), 0.0, 0.02);
  manual_seed(5);
  Tensor b = init::trunc_normal_(empty({64}), 0.0, 0.02);
  EXPECT_EQ(a.to_vector<float>(), b.to_vector<float>());
}

TEST(NnInit, ConstantZerosOnes) {
  Tensor t = empty({3, 4}, DType::bfloat16);
  EXPECT_EQ(moments_of(init::constant_(t, 2.5)).min, 2.5);
  EXPECT_EQ(moments_of(init::zeros_(t)).max, 0.0);
  EXPECT_EQ(moments_of(init::ones_(t)).mean, 1.0);
  EXPECT_THROW(init::zeros_(empty({2}, DType::int64)), TypeError);
}

TEST(NnInit, KaimingUniformAndNormal) {
  manual_seed(3);
  Tensor w = empty({256, 64, 3, 3});               // fan_in 576, fan_out 2304
  auto m = moments_of(init::kaiming_uniform_(w));  // leaky_relu with slope 0: gain sqrt 2
  const double bound = std::sqrt(3.0) * std::sqrt(2.0) / std::sqrt(576.0);
  EXPECT_GE(m.min, -bound);
  EXPECT_LE(m.max, bound);
  EXPECT_NEAR(m.min, -bound, bound * 0.01);
  EXPECT_NEAR(m.std, std::sqrt(2.0 / 576.0), 0.01 * std::sqrt(2.0 / 576.0));
  // PyTorch's layer default: a = sqrt 5 gives a bound of 1 / sqrt(fan_in).
  m = moments_of(init::kaiming_uniform_(w, std::sqrt(5.0)));
  EXPECT_NEAR(m.max, 1.0 / 24.0, 0.001);
  m = moments_of(init::kaiming_normal_(w, 0.0, "fan_out", "relu"));
  EXPECT_NEAR(m.mean, 0.0, 0.001);
  EXPECT_NEAR(m.std, std::sqrt(2.0 / 2304.0), 0.01 * std::sqrt(2.0 / 2304.0));
  EXPECT_THROW(init::kaiming_uniform_(w, 0.0, "fan_avg"), ValueError);
  EXPECT_THROW(init::kaiming_normal_(empty({10})), ShapeError);
}

TEST(NnInit, XavierUniformAndNormal) {
  manual_seed(4);
  Tensor w = empty({300, 500});
  const double std = std::sqrt(2.0 / 800.0);
  auto m = moments_of(init::xavier_uniform_(w, 2.0));
  EXPECT_LE(m.max, 2.0 * std::sqrt(3.0) * std);
  EXPECT_NEAR(m.std, 2.0 * std, 0.01 * 2.0 * std);
  m = moments_of(init::xavier_normal_(w));
  EXPECT_NEAR(m.std, std, 0.01 * std);
}

TEST(NnInit, EmptyTensorsAreLeftAlone) {
  Tensor w = empty({0, 4});
  EXPECT_TRUE(init::kaiming_uniform_(w).is_same(w));
  EXPECT_TRUE(init::xavier_normal_(w).is_same(w));
  EXPECT_TRUE(init::trunc_normal_(w).is_same(w));
}

TEST(NnInit, FillsLeavesThatRequireGradWithoutRecording) {
  Tensor w = empty({4, 4});
  w.requires_grad_(true);
  init::kaiming_uniform_(w);
  EXPECT_TRUE(w.is_leaf());
  EXPECT_TRUE(w.requires_grad());
}

TEST(NnInit, SkipInitGuardFillsZerosAndLeavesTheGenerator) {
  manual_seed(9);
  Tensor w = full({3, 4}, 7.0);
  {
    init::SkipInitGuard outer;
    {
      init::SkipInitGuard inner;
      EXPECT_TRUE(init::random_init_skipped());
    }
    EXPECT_TRUE(init::random_init_skipped()) << "guards nest";
    for (auto fill :
         {+[](const Tensor& t) { init::normal_(t); }, +[](const Tensor& t) { init::kaiming_uniform_(t); },
          +[](const Tensor& t) { init::trunc_normal_(t); }, +[](const Tensor& t) { init::xavier_normal_(t); }}) {
      init::constant_(w, 7.0);
      fill(w);
      auto m = moments_of(w);
      EXPECT_EQ(m.min, 0.0);
      EXPECT_EQ(m.max, 0.0);
    }
    init::ones_(w);
    EXPECT_EQ(moments_of(w).min, 1.0) << "deterministic fills still work";
  }
  EXPECT_FALSE(init::random_init_skipped());
  // No draw happened: the stream continues as if the guard's fills never ran.
  Tensor after = init::normal_(empty({8}));
  manual_seed(9);
  Tensor fresh = init::normal_(empty({8}));
  EXPECT_EQ(after.to_vector<float>(), fresh.to_vector<float>());
}

}  // namespace
}  // namespace hearth
