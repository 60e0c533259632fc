// Counter-based random numbers (Philox4x32-10). Element i of a random op draws
// from counter (offset + i) under key = seed, so results depend only on the seed
// and the op's offset: not on thread count, chunking or device. Each op reserves
// its counters by advancing the global offset.
#pragma once

#include <array>
#include <cstdint>
#include <mutex>

namespace hearth {

// One Philox4x32-10 block: 4 x 32 random bits for (counter, key).
std::array<uint32_t, 4> philox4x32(uint64_t counter_lo, uint64_t counter_hi, uint64_t key);

// Uniform float in [0, 1) from 24 random bits (as curand/PyTorch do for floats).
inline float uint_to_unit_float(uint32_t x) { return static_cast<float>(x >> 8) * (1.0f / 16777216.0f); }
// Uniform double in [0, 1) from 53 random bits.
inline double uints_to_unit_double(uint32_t hi, uint32_t lo) {
  uint64_t v = (static_cast<uint64_t>(hi) << 32 | lo) >> 11;
  return static_cast<double>(v) * (1.0 / 9007199254740992.0);
}

class Generator {
 public:
  explicit Generator(uint64_t seed = 0x853c49e6748fea9bULL) : seed_(seed) {}
  void manual_seed(uint64_t seed) {
    std::lock_guard<std::mutex> lock(mu_);
    seed_ = seed;
    offset_ = 0;
  }
  uint64_t seed() const { return seed_; }
  // Reserves `n` counters and returns the first. Every op calls this once.
  uint64_t reserve(uint64_t n) {
    std::lock_guard<std::mutex> lock(mu_);
    uint64_t o = offset_;
    offset_ += n;
    return o;
  }
  uint64_t offset() const { return offset_; }
  // For checkpoints: the whole state is (seed, offset).
  void set_state(uint64_t seed, uint64_t offset) {
    std::lock_guard<std::mutex> lock(mu_);
    seed_ = seed;
    offset_ = offset;
  }

 private:
  std::mutex mu_;
  uint64_t seed_;
  uint64_t offset_ = 0;
};

Generator& default_generator();
// Seeds the global generator (torch.manual_seed).
void manual_seed(uint64_t seed);

}  // namespace hearth
