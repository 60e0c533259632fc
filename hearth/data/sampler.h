// Which samples an epoch visits, in which order, and how they split across
// replicas. Everything is a pure function of (n, seed, epoch, replicas, rank):
// the same arguments give the same order on every machine and thread count,
// which is what lets training resume mid-epoch and data-parallel ranks agree.
#pragma once

#include <cstdint>
#include <vector>

namespace hearth::data {

// A permutation of [0, n): Fisher-Yates driven by Philox under key `seed`, in
// a counter stream of its own per epoch.
std::vector<int64_t> shuffled_indices(int64_t n, uint64_t seed, int64_t epoch);

struct SamplerOptions {
  bool shuffle = false;
  uint64_t seed = 0;
  // DistributedSampler: each of num_replicas ranks reads a disjoint share.
  int64_t num_replicas = 1;
  int64_t rank = 0;
};

// ceil(n / num_replicas): every rank reads this many samples per epoch.
int64_t samples_per_replica(int64_t n, int64_t num_replicas);

// The samples `options.rank` reads in `epoch`, as PyTorch's DistributedSampler
// picks them: the epoch's order (shuffled, or 0..n-1) is padded to a multiple
// of num_replicas by repeating its beginning, then rank r takes positions r,
// r + num_replicas, ... So across ranks every sample is read once per epoch,
// and the (num_replicas - n % num_replicas) % num_replicas padded ones twice.
std::vector<int64_t> epoch_indices(int64_t n, const SamplerOptions& options, int64_t epoch);

// Throws ValueError unless num_replicas >= 1 and 0 <= rank < num_replicas.
void check_sampler_options(const SamplerOptions& options);

}  // namespace hearth::data
