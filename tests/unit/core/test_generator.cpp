#include "hearth/core/generator.h"

#include <gtest/gtest.h>
#include <omp.h>

#include <array>
#include <cmath>
#include <cstdint>
#include <vector>

#include "hearth/ops/factory.h"

namespace hearth {
namespace {

using Block = std::array<uint32_t, 4>;

uint64_t words(uint32_t lo, uint32_t hi) { return static_cast<uint64_t>(hi) << 32 | lo; }

// Known-answer vectors of Philox4x32-10 from the Random123 distribution
// (kat_vectors): counter words c0..c3, key words k0, k1.
TEST(Philox, MatchesKnownAnswerVectors) {
  EXPECT_EQ(philox4x32(0, 0, 0), (Block{0x6627e8d5u, 0xe169c58du, 0xbc57ac4cu, 0x9b00dbd8u}));
  EXPECT_EQ(philox4x32(~uint64_t{0}, ~uint64_t{0}, ~uint64_t{0}),
            (Block{0x408f276du, 0x41c83b0eu, 0xa20bc7c6u, 0x6d5451fdu}));
  // Counter and key from the digits of pi.
  EXPECT_EQ(philox4x32(words(0x243f6a88u, 0x85a308d3u), words(0x13198a2eu, 0x03707344u),
                       words(0xa4093822u, 0x299f31d0u)),
            (Block{0xd16cfe09u, 0x94fdccebu, 0x5001e420u, 0x24126ea1u}));
}

TEST(Philox, EveryCounterAndKeyWordMatters) {
  Block base = philox4x32(0, 0, 0);
  EXPECT_NE(philox4x32(1, 0, 0), base);
  EXPECT_NE(philox4x32(uint64_t{1} << 32, 0, 0), base);
  EXPECT_NE(philox4x32(0, 1, 0), base);
  EXPECT_NE(philox4x32(0, uint64_t{1} << 32, 0), base);
  EXPECT_NE(philox4x32(0, 0, 1), base);
  EXPECT_NE(philox4x32(0, 0, uint64_t{1} << 32), base);
}

TEST(Philox, UnitIntervalConversionsStayBelowOne) {
  EXPECT_EQ(uint_to_unit_float(0), 0.0f);
  EXPECT_LT(uint_to_unit_float(0xffffffffu), 1.0f);
  EXPECT_EQ(uint_to_unit_float(0x80000000u), 0.5f);
  EXPECT_EQ(uints_to_unit_double(0, 0), 0.0);
  EXPECT_LT(uints_to_unit_double(0xffffffffu, 0xffffffffu), 1.0);
  EXPECT_EQ(uints_to_unit_double(0x80000000u, 0), 0.5);
}

TEST(Generator, ReserveAdvancesTheOffsetAndStateRoundTrips) {
  Generator g(123);
  EXPECT_EQ(g.seed(), 123u);
  EXPECT_EQ(g.reserve(10), 0u);
  EXPECT_EQ(g.reserve(5), 10u);
  EXPECT_EQ(g.offset(), 15u);
  g.set_state(9, 100);
  EXPECT_EQ(g.seed(), 9u);
  EXPECT_EQ(g.reserve(1), 100u);
  g.manual_seed(77);
  EXPECT_EQ(g.seed(), 77u);
  EXPECT_EQ(g.offset(), 0u);
}

TEST(Generator, RandFollowsTheDocumentedCounterMapping) {
  manual_seed(2024);
  Tensor f = rand({10});  // float32: lane i % 4 of block offset + i / 4, 24 bits
  for (int64_t i = 0; i < 10; ++i) {
    Block r = philox4x32(static_cast<uint64_t>(i / 4), 0, 2024);
    EXPECT_EQ(f.to_vector<float>()[i], uint_to_unit_float(r[i % 4])) << i;
  }
  EXPECT_EQ(default_generator().offset(), 3u);  // ceil(10 / 4) counters reserved
  Tensor d = rand({3}, DType::float64);          // float64: two lanes per element, from offset 3
  for (int64_t i = 0; i < 3; ++i) {
    Block r = philox4x32(3 + static_cast<uint64_t>(i / 2), 0, 2024);
    EXPECT_EQ(d.to_vector<double>()[i], uints_to_unit_double(r[2 * (i % 2)], r[2 * (i % 2) + 1])) << i;
  }
  EXPECT_EQ(default_generator().offset(), 5u);
}

TEST(Generator, SameSeedGivesTheSameStreamAndSuccessiveDrawsDiffer) {
  manual_seed(42);
  std::vector<float> a1 = rand({1000}).to_vector<float>();
  std::vector<float> a2 = rand({1000}).to_vector<float>();
  manual_seed(42);
  EXPECT_EQ(rand({1000}).to_vector<float>(), a1);
  EXPECT_EQ(rand({1000}).to_vector<float>(), a2);
  EXPECT_NE(a1, a2);
  manual_seed(43);
  EXPECT_NE(rand({1000}).to_vector<float>(), a1);
}

// Counters are assigned per element, never per thread, so the thread count
// (and hence how the loop is chunked) cannot change the numbers.
TEST(Generator, StreamsDoNotDependOnTheThreadCount) {
  const int saved = omp_get_max_threads();
  auto draw = [](int threads) {
    omp_set_num_threads(threads);
    manual_seed(7);
    std::vector<double> out;
    for (DType dt : {DType::float32, DType::float64, DType::bfloat16}) {
      for (double v : rand({40001}, dt).to_vector<double>()) out.push_back(v);
      for (double v : randn({30001}, dt).to_vector<double>()) out.push_back(v);
    }
    for (int64_t v : randint(-5, 1000, {20001}).to_vector<int64_t>()) out.push_back(static_cast<double>(v));
    return out;
  };
  std::vector<double> one = draw(1);
  std::vector<double> two = draw(2);
  std::vector<double> three = draw(3);
  omp_set_num_threads(saved);
  ASSERT_EQ(one.size(), two.size());
  EXPECT_TRUE(one == two);
  EXPECT_TRUE(one == three);
}

TEST(Generator, DistributionsHaveTheRightRangeAndMoments) {
  manual_seed(11);
  std::vector<float> u = rand({20000}).to_vector<float>();
  double mean = 0;
  for (float v : u) {
    ASSERT_GE(v, 0.0f);
    ASSERT_LT(v, 1.0f);
    mean += v;
  }
  EXPECT_NEAR(mean / u.size(), 0.5, 0.01);

  std::vector<double> n = randn({20000}, DType::float64).to_vector<double>();
  double m = 0, sq = 0;
  for (double v : n) m += v;
  m /= n.size();
  for (double v : n) sq += (v - m) * (v - m);
  EXPECT_NEAR(m, 0.0, 0.03);
  EXPECT_NEAR(std::sqrt(sq / n.size()), 1.0, 0.03);

  std::vector<int64_t> k = randint(3, 6, {3000}).to_vector<int64_t>();
  int counts[3] = {0, 0, 0};
  for (int64_t v : k) {
    ASSERT_GE(v, 3);
    ASSERT_LT(v, 6);
    counts[v - 3] += 1;
  }
  for (int c : counts) EXPECT_GT(c, 850);
}

TEST(Generator, UniformAndNormalFillNonContiguousViewsInLogicalOrder) {
  manual_seed(5);
  std::vector<float> dense = rand({3, 4}).to_vector<float>();
  manual_seed(5);
  Tensor t = empty({4, 3}).transpose(0, 1);  // [3, 4] with strides (1, 3)
  uniform_(t, 0.0, 1.0);
  EXPECT_EQ(t.to_vector<float>(), dense);
  manual_seed(5);
  Tensor s = empty({3, 4}, DType::float64);
  normal_(s, 2.0, 0.0);  // std 0: every value is the mean
  for (double v : s.to_vector<double>()) EXPECT_EQ(v, 2.0);
  EXPECT_THROW(normal_(s, 0.0, -1.0), ValueError);
  EXPECT_THROW(uniform_(empty({2}, DType::int64)), TypeError);
  EXPECT_THROW(randint(3, 3, {2}), ValueError);
}

}  // namespace
}  // namespace hearth
