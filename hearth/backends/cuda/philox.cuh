// Philox4x32-10 on the device, bit for bit the generator of hearth/core/generator.h
// (counter = (c0, c1) from a 64-bit counter, c2 = c3 = 0; key = seed), so a
// kernel drawing counter offset + i gets the CPU's numbers.
#pragma once

#include <cstdint>

namespace hearth::cuda {

struct PhiloxOut {
  uint32_t x[4];
};

__device__ __forceinline__ PhiloxOut philox4x32_10(uint64_t counter, uint64_t key) {
  constexpr uint32_t kM0 = 0xD2511F53u, kM1 = 0xCD9E8D57u, kW0 = 0x9E3779B9u, kW1 = 0xBB67AE85u;
  uint32_t c0 = static_cast<uint32_t>(counter), c1 = static_cast<uint32_t>(counter >> 32), c2 = 0, c3 = 0;
  uint32_t k0 = static_cast<uint32_t>(key), k1 = static_cast<uint32_t>(key >> 32);
#pragma unroll
  for (int r = 0; r < 10; ++r) {
    const uint32_t hi0 = __umulhi(kM0, c0), lo0 = kM0 * c0;
    const uint32_t hi1 = __umulhi(kM1, c2), lo1 = kM1 * c2;
    const uint32_t n0 = hi1 ^ c1 ^ k0, n2 = hi0 ^ c3 ^ k1;
    c0 = n0;
    c1 = lo1;
    c2 = n2;
    c3 = lo0;
    k0 += kW0;
    k1 += kW1;
  }
  return PhiloxOut{{c0, c1, c2, c3}};
}

// The first counter a random kernel draws from: the op's reserved `offset`,
// plus, when the kernel runs inside a replayed step graph, how far the
// generator has moved since the recording (a device word each replay sets;
// null outside graphs). See step_graph.h.
__device__ __forceinline__ uint64_t philox_offset(uint64_t offset, const uint64_t* shift) {
  return shift ? offset + *shift : offset;
}

// Dropout's keep decisions (hearth/dispatch/schemas/dropout.h) of elements
// i0 .. i0 + VEC - 1: lane i%4 of philox(offset + i/4), kept when
// (bits >> 8) >= threshold = ceil(p * 2^24), the integer form of
// (bits >> 8) * 2^-24 >= p. With VEC a multiple of 4 the elements must be
// whole counters (i0 a multiple of 4: the vector paths of row kernels whose
// rows are a multiple of VEC long); otherwise counters are drawn as the
// elements reach them.
__device__ __forceinline__ uint32_t philox_lane(const PhiloxOut& r, uint32_t lane) {
  return lane == 0 ? r.x[0] : lane == 1 ? r.x[1] : lane == 2 ? r.x[2] : r.x[3];
}

template <int VEC>
__device__ __forceinline__ void dropout_keep(uint64_t i0, bool (&keep)[VEC], uint64_t offset, uint64_t seed,
                                             uint32_t threshold) {
  if constexpr (VEC % 4 == 0) {
#pragma unroll
    for (int q = 0; q < VEC / 4; ++q) {
      const PhiloxOut r = philox4x32_10(offset + i0 / 4 + q, seed);
#pragma unroll
      for (int l = 0; l < 4; ++l) keep[4 * q + l] = (r.x[l] >> 8) >= threshold;
    }
  } else {
    uint64_t counter = ~uint64_t{0};
    PhiloxOut r{};
#pragma unroll
    for (int e = 0; e < VEC; ++e) {
      const uint64_t i = i0 + e;
      if (i / 4 != counter) {
        counter = i / 4;
        r = philox4x32_10(offset + counter, seed);
      }
      keep[e] = (philox_lane(r, static_cast<uint32_t>(i % 4)) >> 8) >= threshold;
    }
  }
}

}  // namespace hearth::cuda
