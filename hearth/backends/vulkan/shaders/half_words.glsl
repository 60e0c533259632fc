// 16-bit floats as 16-bit words: a float16 or bfloat16 element is read
// through a uint16_t view of its binding (16-bit storage) and converted here
// with integer operations, exactly as hearth/core/half.h converts on the CPU
// (round to nearest even, float16 subnormals kept, overflow to infinity, NaN
// kept quiet). Integer arithmetic, not the driver's float conversions, whose
// rounding and treatment of subnormals Vulkan leaves to the implementation:
// every device then stores the CPU's bits.
#ifndef HEARTH_VULKAN_HALF_WORDS_GLSL
#define HEARTH_VULKAN_HALF_WORDS_GLSL

// bfloat16: the upper half of a float32.
float bf16_to_float(uint w) { return uintBitsToFloat(w << 16); }
uint float_to_bf16(float f) {
  uint u = floatBitsToUint(f);
  if ((u & 0x7fffffffu) > 0x7f800000u) return (u >> 16) | 0x40u;
  u += 0x7fffu + ((u >> 16) & 1u);
  return u >> 16;
}

// float16: 1 sign, 5 exponent, 10 mantissa bits.
float half_to_float(uint h) {
  const uint sign = (h & 0x8000u) << 16;
  const uint e = (h >> 10) & 0x1fu;
  const uint m = h & 0x3ffu;
  if (e == 0u) {
    // Zero or subnormal: m * 2^-24, exact in float32 (and a normal float32).
    const float f = float(m) * 5.9604644775390625e-8;
    return sign != 0u ? -f : f;
  }
  if (e == 0x1fu) return uintBitsToFloat(sign | 0x7f800000u | (m << 13));
  return uintBitsToFloat(sign | ((e + 112u) << 23) | (m << 13));
}
uint float_to_half(float f) {
  const uint u = floatBitsToUint(f);
  const uint sign = (u >> 16) & 0x8000u;
  const uint a = u & 0x7fffffffu;
  if (a > 0x7f800000u) return sign | 0x7e00u;   // NaN
  if (a >= 0x477ff000u) return sign | 0x7c00u;  // rounds past 65504: infinity
  if (a < 0x38800000u) {                        // a float16 subnormal or zero
    if (a < 0x33000000u) return sign;
    const uint e = a >> 23;
    const uint m = (a & 0x7fffffu) | 0x800000u;
    const uint shift = 126u - e;
    uint hm = m >> shift;
    const uint rem = m & ((1u << shift) - 1u);
    const uint halfway = 1u << (shift - 1u);
    if (rem > halfway || (rem == halfway && (hm & 1u) != 0u)) hm += 1u;
    return sign | hm;
  }
  const uint r = a + 0x0fffu + ((a >> 13) & 1u);
  return sign | ((r - 0x38000000u) >> 13);
}

#endif
