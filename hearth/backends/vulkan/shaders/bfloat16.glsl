// bfloat16 has no GLSL type: a tensor's element is a 16-bit word, the upper
// half of a float32, read through a uint16_t view (16-bit storage) and
// converted here. Rounding to nearest even, NaN kept quiet: hearth/core/half.h.
#ifndef HEARTH_VULKAN_BFLOAT16_GLSL
#define HEARTH_VULKAN_BFLOAT16_GLSL
float bf16_to_float(uint w) { return uintBitsToFloat(w << 16); }
uint float_to_bf16(float f) {
  uint u = floatBitsToUint(f);
  if ((u & 0x7fffffffu) > 0x7f800000u) return (u >> 16) | 0x40u;
  u += 0x7fffu + ((u >> 16) & 1u);
  return u >> 16;
}
#endif
