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

}  // namespace hearth::cuda
