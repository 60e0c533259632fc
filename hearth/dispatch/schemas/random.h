// Random fills. The functional layer reserves counters from the generator and
// passes (seed, offset); every backend then produces the same numbers:
//   uniform_ float32/16/bf16:  element i uses lane i%4 of philox(offset + i/4):
//                              u = (x >> 8) * 2^-24, value = low + (high - low) * u
//   uniform_ float64:          lanes 2(i%2), 2(i%2)+1 of philox(offset + i/2), 53 bits
//   normal_:                   lanes a = 2(i%2), b = a+1 of philox(offset + i/2):
//                              u1 = ((x_a >> 8) + 1) * 2^-24, u2 = (x_b >> 8) * 2^-24,
//                              value = mean + std * sqrt(-2 ln u1) * cos(2 pi u2), in double
//   randint_:                  lanes as normal_, r = (x_a << 32 | x_b) % (high - low) + low
// Ops: uniform_, normal_, randint_: outputs {t}, RandomAttrs.
#pragma once

#include <cstdint>

namespace hearth {

struct RandomAttrs {
  uint64_t seed = 0;
  uint64_t offset = 0;
  double a = 0;  // low / mean
  double b = 1;  // high / std
};

// Counters an op of n elements reserves.
inline uint64_t random_counters(int64_t n, bool four_per_counter) {
  return four_per_counter ? static_cast<uint64_t>((n + 3) / 4) : static_cast<uint64_t>((n + 1) / 2);
}

}  // namespace hearth
