#include "hearth/data/sampler.h"

#include <numeric>
#include <utility>

#include "hearth/core/errors.h"
#include "hearth/core/generator.h"

namespace hearth::data {
namespace {

// Shuffle counters live in the upper half of the counter space (bit 63 of the
// high word set), so they never meet the per-sample augmentation streams of
// hearth/data/transforms.h, which use the sample index (< 2^63) there.
constexpr uint64_t kShuffleStream = uint64_t{1} << 63;

}  // namespace

std::vector<int64_t> shuffled_indices(int64_t n, uint64_t seed, int64_t epoch) {
  HEARTH_CHECK(n >= 0, ValueError, "[sampler] cannot shuffle a negative number of samples (", n, ")");
  std::vector<int64_t> order(static_cast<size_t>(n));
  std::iota(order.begin(), order.end(), int64_t{0});
  uint64_t stream = kShuffleStream | static_cast<uint64_t>(epoch);
  std::array<uint32_t, 4> block{};
  uint64_t draw = 0;
  for (int64_t i = n - 1; i > 0; --i) {
    // Two 64-bit draws per Philox block.
    if (draw % 2 == 0) block = philox4x32(draw / 2, stream, seed);
    uint64_t r = static_cast<uint64_t>(block[(draw % 2) * 2]) << 32 | block[(draw % 2) * 2 + 1];
    ++draw;
    // A uniform j in [0, i] by multiply-high (Lemire), without division.
    auto j = static_cast<int64_t>((static_cast<unsigned __int128>(r) * static_cast<uint64_t>(i + 1)) >> 64);
    std::swap(order[static_cast<size_t>(i)], order[static_cast<size_t>(j)]);
  }
  return order;
}

void check_sampler_options(const SamplerOptions& options) {
  HEARTH_CHECK(options.num_replicas >= 1, ValueError, "[sampler] num_replicas must be >= 1, got ",
               options.num_replicas);
  HEARTH_CHECK(options.rank >= 0 && options.rank < options.num_replicas, ValueError, "[sampler] rank must be in [0, ",
               options.num_replicas, "), got ", options.rank);
}

int64_t samples_per_replica(int64_t n, int64_t num_replicas) { return (n + num_replicas - 1) / num_replicas; }

std::vector<int64_t> epoch_indices(int64_t n, const SamplerOptions& options, int64_t epoch) {
  check_sampler_options(options);
  std::vector<int64_t> order;
  if (options.shuffle) {
    order = shuffled_indices(n, options.seed, epoch);
  } else {
    order.resize(static_cast<size_t>(n));
    std::iota(order.begin(), order.end(), int64_t{0});
  }
  if (options.num_replicas == 1) return order;
  int64_t per_rank = samples_per_replica(n, options.num_replicas);
  std::vector<int64_t> mine;
  mine.reserve(static_cast<size_t>(per_rank));
  for (int64_t k = 0; k < per_rank; ++k) {
    // Position in the padded order; the padding repeats the order from its start.
    int64_t pos = options.rank + k * options.num_replicas;
    mine.push_back(order[static_cast<size_t>(pos % n)]);
  }
  return mine;
}

}  // namespace hearth::data
