// Typed views of tensor bindings. DECLARE_TENSOR(k, binding) declares the
// binding as float, int, int64 and 8-bit arrays (aliases of one buffer), and
// as double where HAS_FLOAT64 is defined (a shader that declares doubles
// runs only on devices with shaderFloat64), as 16-bit words where
// HAS_FLOAT16 is defined (only on devices with shaderFloat16 and 16-bit
// storage): float16 and bfloat16 elements, converted to and from float32 by
// half_words.glsl, as the CPU computes half inputs in float32 and rounds the
// result once), and load_k / store_k that read
// and write element i as the value type V by the dtype code DT_k (a
// specialisation constant, so the unused branches fold away when the
// pipeline is built).
#extension GL_EXT_shader_explicit_arithmetic_types_int64 : require
#extension GL_EXT_shader_8bit_storage : require

#ifdef HAS_FLOAT64
#define DECLARE_DOUBLE_VIEW(k, b) \
  layout(std430, set = 0, binding = b) buffer T##k##D { double v[]; } t##k##d;
#define LOAD_DOUBLE(k) \
  if (DT_##k == DT_FLOAT64) return V(t##k##d.v[i]);
#define STORE_DOUBLE(k) \
  if (DT_##k == DT_FLOAT64) t##k##d.v[i] = double(x); else
#else
#define DECLARE_DOUBLE_VIEW(k, b)
#define LOAD_DOUBLE(k)
#define STORE_DOUBLE(k)
#endif

#ifdef HAS_FLOAT16
#extension GL_EXT_shader_16bit_storage : require
#include "half_words.glsl"
#define DECLARE_HALF_VIEW(k, b) \
  layout(std430, set = 0, binding = b) buffer T##k##W { uint16_t v[]; } t##k##w;
#define LOAD_HALF(k) \
  if (DT_##k == DT_FLOAT16) return V(half_to_float(uint(t##k##w.v[i]))); \
  if (DT_##k == DT_BFLOAT16) return V(bf16_to_float(uint(t##k##w.v[i])));
#define STORE_HALF(k) \
  if (DT_##k == DT_FLOAT16) t##k##w.v[i] = uint16_t(float_to_half(float(x))); \
  else if (DT_##k == DT_BFLOAT16) t##k##w.v[i] = uint16_t(float_to_bf16(float(x))); else
#else
#define DECLARE_HALF_VIEW(k, b)
#define LOAD_HALF(k)
#define STORE_HALF(k)
#endif

#define DECLARE_TENSOR(k, b)                                                             \
  DECLARE_DOUBLE_VIEW(k, b)                                                              \
  DECLARE_HALF_VIEW(k, b)                                                                \
  layout(std430, set = 0, binding = b) buffer T##k##F { float v[]; } t##k##f;            \
  layout(std430, set = 0, binding = b) buffer T##k##I { int v[]; } t##k##i;              \
  layout(std430, set = 0, binding = b) buffer T##k##L { int64_t v[]; } t##k##l;          \
  layout(std430, set = 0, binding = b) buffer T##k##B { uint8_t v[]; } t##k##b;          \
  V load_##k(uint i) {                                                                   \
    LOAD_DOUBLE(k)                                                                       \
    LOAD_HALF(k)                                                                         \
    if (DT_##k == DT_FLOAT32) return V(t##k##f.v[i]);                                    \
    if (DT_##k == DT_INT32) return V(t##k##i.v[i]);                                      \
    if (DT_##k == DT_INT64) return V(t##k##l.v[i]);                                      \
    return V(uint(t##k##b.v[i]));                                                        \
  }                                                                                      \
  void store_##k(uint i, V x) {                                                          \
    STORE_DOUBLE(k)                                                                      \
    STORE_HALF(k)                                                                        \
    if (DT_##k == DT_FLOAT32) t##k##f.v[i] = float(x);                                   \
    else if (DT_##k == DT_INT32) t##k##i.v[i] = int(x);                                  \
    else if (DT_##k == DT_INT64) t##k##l.v[i] = int64_t(x);                              \
    else if (DT_##k == DT_BOOL) t##k##b.v[i] = uint8_t(x != V(0) ? 1u : 0u);             \
    else t##k##b.v[i] = uint8_t(uint(int64_t(x)) & 255u);                                \
  }
