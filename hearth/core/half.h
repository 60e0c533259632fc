// Storage types for the 16-bit floats. Arithmetic happens in float: kernels
// load, convert, compute and convert back, as PyTorch's CPU kernels do.
#pragma once

#include <cstdint>
#include <cstring>

namespace hearth {

struct BFloat16 {
  uint16_t bits = 0;
  BFloat16() = default;
  BFloat16(float f) : bits(from_float(f)) {}  // NOLINT: implicit like a numeric type
  operator float() const {                   // NOLINT
    uint32_t u = static_cast<uint32_t>(bits) << 16;
    float f;
    std::memcpy(&f, &u, 4);
    return f;
  }
  // Round to nearest even; NaN stays a (quiet) NaN.
  static uint16_t from_float(float f) {
    uint32_t u;
    std::memcpy(&u, &f, 4);
    if ((u & 0x7fffffffu) > 0x7f800000u) return static_cast<uint16_t>((u >> 16) | 0x40);
    u += 0x7fffu + ((u >> 16) & 1u);
    return static_cast<uint16_t>(u >> 16);
  }
};

struct Half {
  uint16_t bits = 0;
  Half() = default;
  Half(float f) : bits(from_float(f)) {}  // NOLINT
  operator float() const { return to_float(bits); }  // NOLINT

  static float to_float(uint16_t h) {
    uint32_t sign = (h & 0x8000u) << 16;
    uint32_t exp = (h >> 10) & 0x1fu;
    uint32_t man = h & 0x3ffu;
    uint32_t u;
    if (exp == 0) {
      if (man == 0) {
        u = sign;
      } else {  // subnormal: normalise
        exp = 127 - 15 + 1;
        while ((man & 0x400u) == 0) {
          man <<= 1;
          --exp;
        }
        man &= 0x3ffu;
        u = sign | (exp << 23) | (man << 13);
      }
    } else if (exp == 0x1f) {
      u = sign | 0x7f800000u | (man << 13);
    } else {
      u = sign | ((exp + 127 - 15) << 23) | (man << 13);
    }
    float f;
    std::memcpy(&f, &u, 4);
    return f;
  }

  static uint16_t from_float(float f) {
    uint32_t u;
    std::memcpy(&u, &f, 4);
    uint32_t sign = (u >> 16) & 0x8000u;
    uint32_t absu = u & 0x7fffffffu;
    if (absu > 0x7f800000u) return static_cast<uint16_t>(sign | 0x7e00u);  // NaN
    if (absu >= 0x477ff000u) return static_cast<uint16_t>(sign | 0x7c00u);  // overflow -> inf
    if (absu < 0x38800000u) {  // subnormal or zero in half
      if (absu < 0x33000000u) return static_cast<uint16_t>(sign);
      uint32_t e = absu >> 23;
      uint32_t m = (absu & 0x7fffffu) | 0x800000u;
      uint32_t shift = 126 - e;  // 113 - e + 13
      uint32_t half_m = m >> shift;
      uint32_t rem = m & ((1u << shift) - 1);
      uint32_t halfway = 1u << (shift - 1);
      if (rem > halfway || (rem == halfway && (half_m & 1u))) ++half_m;
      return static_cast<uint16_t>(sign | half_m);
    }
    uint32_t r = absu + 0x0fffu + ((absu >> 13) & 1u);  // round to nearest even
    return static_cast<uint16_t>(sign | ((r - 0x38000000u) >> 13));
  }
};

}  // namespace hearth
