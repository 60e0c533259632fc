#version 450
// Row reductions: x [outer, inner] contiguous, one result per row. One
// workgroup per row (rows beyond the grid loop); each invocation folds a
// strided slice of the row, then the workgroup combines the partial results
// in shared memory (WG, a power of two, sizes the arrays).
//   OP 0 sum  1 amax  2 amin  3 max_dim  4 min_dim (values and int64 indices:
//   the first occurrence on ties, the first NaN wins). NaN propagates.
//   OP 5 norm: ||row||_p (p = +-inf: the largest / smallest magnitude, p = 0:
//   the count of non-zeros), accumulated in the value type.
// Compiled as reduce_rows_float (float32 accumulation), reduce_rows_int
// (int64), reduce_rows_double (float64, for devices with shaderFloat64) and
// reduce_rows_half and reduce_rows_bfloat16 (16-bit rows, float32
// accumulation; devices with shaderFloat16 and 16-bit storage).
#extension GL_EXT_shader_explicit_arithmetic_types_int64 : require

#if defined(VALUE_INT)
#define V int64_t
#define X_TYPE int64_t
#elif defined(VALUE_DOUBLE)
#define V double
#define X_TYPE double
#elif defined(HAS_FLOAT16)
// float16 rows (16-bit words, half_words.glsl), accumulated in float32 and
// rounded once (the CPU's way).
#extension GL_EXT_shader_16bit_storage : require
#include "half_words.glsl"
#define V float
#define X_TYPE uint16_t
#define LOAD_X(w) half_to_float(uint(w))
#define STORE_X(r) uint16_t(float_to_half(r))
#elif defined(HAS_BFLOAT16)
// bfloat16 rows, likewise.
#extension GL_EXT_shader_16bit_storage : require
#include "half_words.glsl"
#define V float
#define X_TYPE uint16_t
#define LOAD_X(w) bf16_to_float(uint(w))
#define STORE_X(r) uint16_t(float_to_bf16(r))
#else
#define V float
#define X_TYPE float
#endif

#ifndef LOAD_X
#define LOAD_X(w) V(w)
#define STORE_X(r) X_TYPE(r)
#endif

layout(local_size_x_id = 0) in;
#define WG gl_WorkGroupSize.x  // a power of two (the host chooses it)
layout(constant_id = 1) const uint OP = 0;

layout(std430, set = 0, binding = 0) readonly buffer Params {
  uint off_x;
  uint off_out;
  uint off_idx;
  uint outer;
  uint inner;
  float norm_p;
}
p;
layout(std430, set = 0, binding = 1) readonly buffer X { X_TYPE x[]; };
layout(std430, set = 0, binding = 2) writeonly buffer Out { X_TYPE out_v[]; };
layout(std430, set = 0, binding = 3) writeonly buffer Idx { int64_t out_i[]; };

shared V s_val[WG];
shared uint s_idx[WG];

#ifdef VALUE_INT
bool is_nan(V v) { return false; }
#else
bool is_nan(V v) { return isnan(v); }
#endif

// Whether (a, ia) should replace (b, ib) as the running result.
bool better(V a, uint ia, V b, uint ib) {
  const bool want_max = OP == 1u || OP == 3u || (OP == 5u && p.norm_p > 0.0);
  if (is_nan(a) || is_nan(b)) {
    if (is_nan(a) && is_nan(b)) return ia < ib;
    return is_nan(a);
  }
  if (a == b) return ia < ib;
  return want_max ? a > b : a < b;
}

void main() {
  const uint t = gl_LocalInvocationID.x;
  for (uint row = gl_WorkGroupID.x; row < p.outer; row += gl_NumWorkGroups.x) {
    const uint base = p.off_x + row * p.inner;
    V acc = V(0);
    uint acc_i = 0xffffffffu;
    const bool norm_extreme = OP == 5u && isinf(p.norm_p);
    const bool summing = OP == 0u || (OP == 5u && !norm_extreme);
    for (uint k = t; k < p.inner; k += WG) {
      V v = LOAD_X(x[base + k]);
#ifndef VALUE_INT
      if (OP == 5u) {
        v = abs(v);
        if (!norm_extreme) {
          if (p.norm_p == 0.0) v = v != V(0) ? V(1) : V(0);
          else if (p.norm_p == 2.0) v = v * v;
          else if (p.norm_p != 1.0) v = V(pow(float(v), p.norm_p));
        }
      }
#endif
      if (summing) {
        acc += v;
      } else if (acc_i == 0xffffffffu || better(v, k, acc, acc_i)) {
        acc = v;
        acc_i = k;
      }
    }
    s_val[t] = acc;
    s_idx[t] = acc_i;
    barrier();
    for (uint s = WG / 2; s > 0; s >>= 1) {
      if (t < s) {
        if (summing) {
          s_val[t] += s_val[t + s];
        } else if (s_idx[t + s] != 0xffffffffu &&
                   (s_idx[t] == 0xffffffffu || better(s_val[t + s], s_idx[t + s], s_val[t], s_idx[t]))) {
          s_val[t] = s_val[t + s];
          s_idx[t] = s_idx[t + s];
        }
      }
      barrier();
    }
    if (t == 0) {
      V r = s_val[0];
#ifndef VALUE_INT
      if (OP == 5u && !norm_extreme) {
        if (p.norm_p == 2.0) r = sqrt(r);
        else if (p.norm_p != 1.0 && p.norm_p != 0.0) r = V(pow(float(r), 1.0 / p.norm_p));
      }
#endif
      out_v[p.off_out + row] = STORE_X(r);
      if (OP >= 3u) out_i[p.off_idx + row] = int64_t(s_idx[0]);
    }
    barrier();
  }
}
