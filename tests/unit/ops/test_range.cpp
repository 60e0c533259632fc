#include <cstdint>

#include <gtest/gtest.h>

#include "tests/unit/ops/elementwise_testing.h"

namespace hearth {
namespace {

using test::throws_with;
using test::values_near;

TEST(Arange, IntegerEndGivesInt64) {
  Tensor t = arange(5);
  EXPECT_EQ(t.dtype(), DType::int64);
  EXPECT_EQ(t.to_vector<int64_t>(), (std::vector<int64_t>{0, 1, 2, 3, 4}));
  EXPECT_EQ(arange(0).numel(), 0);
}

TEST(Arange, StartEndStep) {
  EXPECT_TRUE(values_near(arange(1, 2.5, 0.5, DType::float32), {1, 1.5, 2}));
  EXPECT_TRUE(values_near(arange(5, 0, -2, DType::int64), {5, 3, 1}));
  EXPECT_TRUE(values_near(arange(4, DType::float64), {0, 1, 2, 3}));
  EXPECT_EQ(arange(0, 1, 0.1, DType::float32).numel(), 10);  // ceil((1 - 0) / 0.1)
  EXPECT_EQ(arange(0, 10, 3, DType::int32).to_vector<int32_t>(), (std::vector<int32_t>{0, 3, 6, 9}));
  EXPECT_EQ(arange(3, 3, 1, DType::float32).numel(), 0);
  EXPECT_TRUE(values_near(arange(0, 3, 1, DType::bfloat16), {0, 1, 2}));
}

TEST(Arange, ValuesComeFromTheIndexNotARunningSum) {
  Tensor t = arange(0, 1, 0.1, DType::float64);
  std::vector<double> v = t.to_vector<double>();
  for (size_t i = 0; i < v.size(); ++i) EXPECT_EQ(v[i], 0.1 * static_cast<double>(i));
  // Integer ranges beyond 2^53 stay exact.
  const int64_t big = int64_t{1} << 60;
  Tensor b = arange(big, big + 3, 1, DType::int64);
  EXPECT_EQ(b.to_vector<int64_t>(), (std::vector<int64_t>{big, big + 1, big + 2}));
  // Long enough to be filled in parallel chunks.
  Tensor l = arange(100000);
  EXPECT_EQ(l.to_vector<int64_t>()[99999], 99999);
}

TEST(Arange, BadArguments) {
  EXPECT_TRUE(throws_with<ValueError>([] { arange(0, 5, 0, DType::float32); }, "nonzero"));
  EXPECT_TRUE(throws_with<ValueError>([] { arange(0, 5, -1, DType::float32); }, "sign"));
  EXPECT_TRUE(throws_with<TypeError>([] { arange(0, 2, 1, DType::bool_); }, "[arange]"));
}

TEST(Linspace, EndpointsAreExact) {
  EXPECT_TRUE(values_near(linspace(0, 1, 5), {0, 0.25, 0.5, 0.75, 1}));
  Tensor t = linspace(0.1, 0.7, 7, DType::float64);
  std::vector<double> v = t.to_vector<double>();
  EXPECT_EQ(v.front(), 0.1);
  EXPECT_EQ(v.back(), 0.7);
  EXPECT_TRUE(values_near(t, {0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7}, 1e-15));
  EXPECT_TRUE(values_near(linspace(3, -3, 4), {3, 1, -1, -3}));
}

TEST(Linspace, EdgeCounts) {
  EXPECT_TRUE(values_near(linspace(2, 5, 1), {2}));
  EXPECT_EQ(linspace(2, 5, 0).numel(), 0);
  EXPECT_EQ(linspace(0, 10, 4, DType::int64).to_vector<int64_t>(), (std::vector<int64_t>{0, 3, 6, 10}));
  EXPECT_TRUE(throws_with<ValueError>([] { linspace(0, 1, -1); }, "[linspace]"));
}

TEST(Eye, SquareRectangularAndEmpty) {
  EXPECT_TRUE(values_near(eye(3), {1, 0, 0, 0, 1, 0, 0, 0, 1}));
  Tensor r = eye(2, 4, DType::int64);
  EXPECT_EQ(r.shape(), (Shape{2, 4}));
  EXPECT_EQ(r.to_vector<int64_t>(), (std::vector<int64_t>{1, 0, 0, 0, 0, 1, 0, 0}));
  EXPECT_TRUE(values_near(eye(3, 2), {1, 0, 0, 1, 0, 0}));
  EXPECT_EQ(eye(0).shape(), (Shape{0, 0}));
  EXPECT_TRUE(eye(2).is_contiguous());
  EXPECT_TRUE(throws_with<ValueError>([] { eye(-2); }, "[eye]"));
}

}  // namespace
}  // namespace hearth
