#include <cmath>
#include <vector>

#include <gtest/gtest.h>

#include "hearth/autograd/gradcheck.h"
#include "hearth/core/generator.h"
#include "hearth/ops/elementwise.h"
#include "hearth/ops/factory.h"
#include "hearth/ops/nn_functional.h"
#include "hearth/ops/reduction.h"
#include "hearth/ops/view.h"

namespace hearth {
namespace {

// Which of n elements the documented mapping keeps for (seed, offset).
std::vector<bool> expected_keep(uint64_t seed, uint64_t offset, int64_t n, double p) {
  std::vector<bool> keep(n);
  for (int64_t i = 0; i < n; ++i) {
    auto r = philox4x32(offset + static_cast<uint64_t>(i / 4), 0, seed);
    keep[i] = uint_to_unit_float(r[i % 4]) >= p;
  }
  return keep;
}

TEST(Dropout, FollowsThePhiloxMappingAndScalesSurvivors) {
  manual_seed(1234);
  default_generator().reserve(5);  // start at a non-zero offset
  const uint64_t seed = default_generator().seed();
  Tensor x = add(rand({3, 7}, DType::float64), 1.0);
  const uint64_t before = default_generator().offset();
  Tensor y = dropout(x, 0.25);
  EXPECT_EQ(default_generator().offset(), before + (21 + 3) / 4);  // four elements per counter
  std::vector<bool> keep = expected_keep(seed, before, 21, 0.25);
  std::vector<double> xv = x.to_vector<double>(), yv = y.to_vector<double>();
  for (int i = 0; i < 21; ++i) EXPECT_NEAR(yv[i], keep[i] ? xv[i] / 0.75 : 0.0, 1e-12) << "element " << i;
}

TEST(Dropout, SameSeedSameMaskAndNextCallDiffers) {
  Tensor x = ones({1000});
  manual_seed(7);
  std::vector<float> a = dropout(x, 0.5).to_vector<float>();
  std::vector<float> c = dropout(x, 0.5).to_vector<float>();
  manual_seed(7);
  std::vector<float> b = dropout(x, 0.5).to_vector<float>();
  EXPECT_EQ(a, b);
  EXPECT_NE(a, c);
}

TEST(Dropout, MaskStatistics) {
  manual_seed(99);
  const int64_t n = 100000;
  Tensor x = ones({n});
  for (double p : {0.1, 0.5, 0.8}) {
    std::vector<float> y = dropout(x, p).to_vector<float>();
    int64_t zeros = 0;
    double total = 0;
    for (float v : y) {
      zeros += v == 0.f;
      total += v;
    }
    // Five standard deviations: sqrt(p(1-p)/n) <= 0.0016 for the fraction dropped,
    // sqrt(p/(1-p)/n) <= 0.0064 for the mean.
    EXPECT_NEAR(static_cast<double>(zeros) / n, p, 0.008) << "p=" << p;
    EXPECT_NEAR(total / n, 1.0, 0.032) << "p=" << p;  // survivors are scaled: the mean is kept
  }
}

TEST(Dropout, BackwardReusesTheMask) {
  manual_seed(3);
  Tensor x = add(rand({50}), 0.5).requires_grad_();
  Tensor y = dropout(x, 0.4);
  sum(y).backward();
  std::vector<float> yv = y.to_vector<float>(), g = x.grad().to_vector<float>();
  const float scale = static_cast<float>(1.0 / 0.6);
  for (size_t i = 0; i < g.size(); ++i) EXPECT_EQ(g[i], yv[i] == 0.f ? 0.f : scale) << "element " << i;
}

TEST(Dropout, NonContiguousInputUsesLogicalOrder) {
  Tensor base = randn({4, 6});
  Tensor xt = transpose(base, 0, 1);
  manual_seed(11);
  std::vector<float> a = dropout(xt, 0.3).to_vector<float>();
  manual_seed(11);
  std::vector<float> b = dropout(contiguous(xt), 0.3).to_vector<float>();
  EXPECT_EQ(a, b);
}

TEST(Dropout, HalfTypes) {
  for (DType dt : {DType::bfloat16, DType::float16, DType::float32}) {
    manual_seed(5);
    Tensor y = dropout(ones({64}, dt), 0.5);
    EXPECT_EQ(y.dtype(), dt);
    for (double v : y.to_vector<double>()) EXPECT_TRUE(v == 0.0 || v == 2.0) << v;
  }
  // Every dtype drops the same elements for the same seed.
  manual_seed(5);
  std::vector<double> f = dropout(ones({64}, DType::float64), 0.5).to_vector<double>();
  manual_seed(5);
  EXPECT_EQ(dropout(ones({64}, DType::bfloat16), 0.5).to_vector<double>(), f);
}

TEST(Dropout, IdentityAndAllDropped) {
  Tensor x = randn({10}).requires_grad_();
  const uint64_t before = default_generator().offset();
  EXPECT_TRUE(dropout(x, 0.5, /*training=*/false).is_same(x));
  EXPECT_TRUE(dropout(x, 0.0).is_same(x));
  Tensor z = dropout(x, 1.0);
  EXPECT_EQ(default_generator().offset(), before);  // no random numbers drawn
  EXPECT_EQ(z.to_vector<float>(), std::vector<float>(10, 0.f));
  sum(z).backward();
  EXPECT_EQ(x.grad().to_vector<float>(), std::vector<float>(10, 0.f));
  EXPECT_EQ(dropout(zeros({0, 3}), 0.5).shape(), (Shape{0, 3}));
}

TEST(Dropout, Gradcheck) {
  auto fn = [](const std::vector<Tensor>& in) {
    manual_seed(21);  // the same mask on every evaluation
    return dropout(in[0], 0.3);
  };
  Tensor x = randn({4, 5}, DType::float64).requires_grad_();
  auto r = gradcheck(fn, {x});
  EXPECT_TRUE(r.ok) << r.message;
  Tensor xt = transpose(randn({5, 4}, DType::float64), 0, 1);
  xt.requires_grad_();
  auto r2 = gradcheck(fn, {xt});
  EXPECT_TRUE(r2.ok) << r2.message;
}

TEST(Dropout, BadInput) {
  EXPECT_THROW(dropout(randn({3}), -0.1), ValueError);
  EXPECT_THROW(dropout(randn({3}), 1.5), ValueError);
  EXPECT_THROW(dropout(ones({3}, DType::int64), 0.5), TypeError);
}

}  // namespace
}  // namespace hearth
