#include <cmath>
#include <cstdint>

#include <gtest/gtest.h>

#include "hearth/core/generator.h"
#include "tests/unit/ops/elementwise_testing.h"

namespace hearth {
namespace {

using test::throws_with;

struct Moments {
  double mean = 0, std = 0, min = 0, max = 0;
};

Moments moments(const Tensor& t) {
  std::vector<double> v = t.to_vector<double>();
  Moments m;
  m.min = m.max = v[0];
  for (double x : v) {
    m.mean += x;
    m.min = std::min(m.min, x);
    m.max = std::max(m.max, x);
  }
  m.mean /= static_cast<double>(v.size());
  for (double x : v) m.std += (x - m.mean) * (x - m.mean);
  m.std = std::sqrt(m.std / static_cast<double>(v.size() - 1));
  return m;
}

TEST(Random, SameSeedSameValues) {
  manual_seed(1234);
  std::vector<float> a = rand({64}).to_vector<float>();
  std::vector<float> n1 = randn({7}).to_vector<float>();
  manual_seed(1234);
  EXPECT_EQ(rand({64}).to_vector<float>(), a);
  EXPECT_EQ(randn({7}).to_vector<float>(), n1);
  manual_seed(99);
  EXPECT_NE(rand({64}).to_vector<float>(), a);
}

TEST(Random, ConsecutiveCallsDiffer) {
  manual_seed(5);
  EXPECT_NE(rand({16}).to_vector<float>(), rand({16}).to_vector<float>());
}

TEST(Random, UniformRangeAndMoments) {
  manual_seed(7);
  for (DType dt : {DType::float32, DType::float64}) {
    Moments m = moments(rand({100000}, dt));
    EXPECT_GE(m.min, 0.0);
    EXPECT_LT(m.max, 1.0);
    EXPECT_NEAR(m.mean, 0.5, 0.01) << dtype_name(dt);
    EXPECT_NEAR(m.std, std::sqrt(1.0 / 12), 0.01) << dtype_name(dt);
  }
  Tensor u = empty({50000});
  uniform_(u, -2, 6);
  Moments m = moments(u);
  EXPECT_GE(m.min, -2.0);
  EXPECT_LT(m.max, 6.0);
  EXPECT_NEAR(m.mean, 2.0, 0.1);
  EXPECT_EQ(rand({8}, DType::bfloat16).dtype(), DType::bfloat16);
}

TEST(Random, NormalMoments) {
  manual_seed(11);
  Moments m = moments(randn({100000}, DType::float64));
  EXPECT_NEAR(m.mean, 0.0, 0.02);
  EXPECT_NEAR(m.std, 1.0, 0.02);
  Tensor t = empty({50000});
  normal_(t, 3.0, 0.5);
  Moments s = moments(t);
  EXPECT_NEAR(s.mean, 3.0, 0.02);
  EXPECT_NEAR(s.std, 0.5, 0.02);
}

TEST(Random, RandintRangeAndDtype) {
  manual_seed(3);
  Tensor r = randint(-3, 4, {20000});
  EXPECT_EQ(r.dtype(), DType::int64);
  Moments m = moments(r);
  EXPECT_EQ(m.min, -3);
  EXPECT_EQ(m.max, 3);
  EXPECT_NEAR(m.mean, 0.0, 0.1);
  EXPECT_EQ(randint(0, 10, {5}, DType::int32).dtype(), DType::int32);
}

TEST(Random, NonContiguousFillsInLogicalOrder) {
  manual_seed(42);
  Tensor dense = rand({4, 3});
  manual_seed(42);
  Tensor base = zeros({3, 4});
  Tensor view = transpose(base, 0, 1);  // logical shape [4, 3], not contiguous
  uniform_(view, 0, 1);
  EXPECT_EQ(view.contiguous().to_vector<float>(), dense.to_vector<float>());
}

TEST(Random, BadArguments) {
  EXPECT_TRUE(throws_with<TypeError>([] { rand({2}, DType::int64); }, "[uniform_]"));
  EXPECT_TRUE(throws_with<ValueError>([] { randint(5, 5, {2}); }, "[randint]"));
  Tensor t = empty({2});
  EXPECT_TRUE(throws_with<ValueError>([&] { normal_(t, 0, -1); }, "[normal_]"));
  EXPECT_EQ(rand({0}).numel(), 0);
}

}  // namespace
}  // namespace hearth
