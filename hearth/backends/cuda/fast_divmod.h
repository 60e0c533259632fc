// Division by a divisor fixed at launch, without a divide instruction: the
// host picks a magic number per divisor, the device multiplies and shifts.
// A 64-bit `/` and `%` costs tens of instructions on a GPU; this is three.
// Plain C++ (host and device), so the host-side unit tests check the math.
#pragma once

#include <cstdint>

#if defined(__CUDACC__)
#define HEARTH_HOST_DEVICE __host__ __device__
#else
#define HEARTH_HOST_DEVICE
#endif

namespace hearth::cuda {

// Valid for divisors in [1, 2^31) and dividends in [0, 2^31): with
// s = ceil(log2 d) and m = floor(2^32 (2^s - d) / d) + 1 (which fits 32 bits),
// n / d = (mulhi(n, m) + n) >> s, and the sum cannot overflow 32 bits because
// both terms are below 2^31.
struct FastDivmod {
  uint32_t divisor = 1;
  uint32_t magic = 1;
  uint32_t shift = 0;

  FastDivmod() = default;
  explicit FastDivmod(uint32_t d) : divisor(d) {
    shift = 0;
    while ((uint64_t{1} << shift) < d) ++shift;
    const uint64_t one = 1;
    magic = static_cast<uint32_t>(((one << 32) * ((one << shift) - d)) / d + 1);
  }

  HEARTH_HOST_DEVICE uint32_t div(uint32_t n) const {
#if defined(__CUDA_ARCH__)
    const uint32_t hi = __umulhi(n, magic);
#else
    const uint32_t hi = static_cast<uint32_t>((static_cast<uint64_t>(n) * magic) >> 32);
#endif
    return (hi + n) >> shift;
  }

  HEARTH_HOST_DEVICE void divmod(uint32_t n, uint32_t& q, uint32_t& r) const {
    q = div(n);
    r = n - q * divisor;
  }
};

}  // namespace hearth::cuda
