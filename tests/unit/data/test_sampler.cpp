#include <algorithm>
#include <numeric>

#include <gtest/gtest.h>

#include "hearth/core/errors.h"
#include "hearth/data/sampler.h"

namespace hearth::data {
namespace {

std::vector<int64_t> iota(int64_t n) {
  std::vector<int64_t> v(static_cast<size_t>(n));
  std::iota(v.begin(), v.end(), int64_t{0});
  return v;
}

TEST(Sampler, ShuffleIsAPermutationFixedBySeedAndEpoch) {
  auto a = shuffled_indices(1000, 7, 0);
  auto sorted = a;
  std::sort(sorted.begin(), sorted.end());
  EXPECT_EQ(sorted, iota(1000));
  EXPECT_NE(a, iota(1000));
  EXPECT_EQ(a, shuffled_indices(1000, 7, 0));
  EXPECT_NE(a, shuffled_indices(1000, 7, 1));
  EXPECT_NE(a, shuffled_indices(1000, 8, 0));
  EXPECT_TRUE(shuffled_indices(0, 1, 0).empty());
  EXPECT_EQ(shuffled_indices(1, 1, 0), std::vector<int64_t>{0});
}

TEST(Sampler, ShuffleIsRoughlyUniform) {
  // Where element 0 lands over many epochs: each of 4 slots about a quarter.
  std::vector<int> hits(4, 0);
  for (int64_t e = 0; e < 4000; ++e) {
    auto p = shuffled_indices(4, 123, e);
    hits[static_cast<size_t>(std::find(p.begin(), p.end(), 0) - p.begin())]++;
  }
  for (int h : hits) EXPECT_NEAR(h, 1000, 120);
}

TEST(Sampler, UnshardedOrderIsSequentialWithoutShuffle) { EXPECT_EQ(epoch_indices(5, SamplerOptions{}, 3), iota(5)); }

TEST(Sampler, ShardsCoverEveryIndexExactlyOnceWhenDivisible) {
  for (bool shuffle : {false, true}) {
    SamplerOptions o;
    o.shuffle = shuffle;
    o.seed = 5;
    o.num_replicas = 3;
    std::vector<int64_t> all;
    for (int64_t r = 0; r < 3; ++r) {
      o.rank = r;
      auto mine = epoch_indices(12, o, 2);
      EXPECT_EQ(mine.size(), 4u);
      all.insert(all.end(), mine.begin(), mine.end());
    }
    std::sort(all.begin(), all.end());
    EXPECT_EQ(all, iota(12)) << "shuffle=" << shuffle;
  }
}

TEST(Sampler, ShardsArePaddedLikeDistributedSampler) {
  SamplerOptions o;
  o.num_replicas = 4;
  // 10 samples on 4 ranks: 3 each, the order padded with its first 2 indices.
  std::vector<std::vector<int64_t>> expected = {{0, 4, 8}, {1, 5, 9}, {2, 6, 0}, {3, 7, 1}};
  std::vector<int> count(10, 0);
  for (int64_t r = 0; r < 4; ++r) {
    o.rank = r;
    auto mine = epoch_indices(10, o, 0);
    EXPECT_EQ(mine, expected[static_cast<size_t>(r)]);
    for (int64_t i : mine) count[static_cast<size_t>(i)]++;
  }
  EXPECT_EQ(samples_per_replica(10, 4), 3);
  for (int64_t i = 0; i < 10; ++i) EXPECT_EQ(count[static_cast<size_t>(i)], i < 2 ? 2 : 1) << i;

  // Fewer samples than ranks: the order repeats as often as needed.
  o.num_replicas = 5;
  o.rank = 4;
  EXPECT_EQ(epoch_indices(2, o, 0), std::vector<int64_t>{0});
  o.rank = 3;
  EXPECT_EQ(epoch_indices(2, o, 0), std::vector<int64_t>{1});
}

TEST(Sampler, ShuffledShardsAgreeOnOnePermutation) {
  SamplerOptions o;
  o.shuffle = true;
  o.seed = 99;
  o.num_replicas = 2;
  auto perm = shuffled_indices(7, 99, 4);
  for (int64_t r = 0; r < 2; ++r) {
    o.rank = r;
    auto mine = epoch_indices(7, o, 4);
    ASSERT_EQ(mine.size(), 4u);
    for (size_t k = 0; k < mine.size(); ++k) EXPECT_EQ(mine[k], perm[(r + 2 * k) % 7]);
  }
}

TEST(Sampler, RejectsBadReplicaOptions) {
  SamplerOptions o;
  o.num_replicas = 0;
  EXPECT_THROW(epoch_indices(4, o, 0), ValueError);
  o.num_replicas = 2;
  o.rank = 2;
  EXPECT_THROW(epoch_indices(4, o, 0), ValueError);
  o.rank = -1;
  EXPECT_THROW(epoch_indices(4, o, 0), ValueError);
}

}  // namespace
}  // namespace hearth::data
