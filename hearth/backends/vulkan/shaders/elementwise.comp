#version 450
// Every elementwise op over strided, broadcast operands: out = f(a, b, c).
// The op and the four dtypes are specialisation constants, so each pipeline
// holds one op's code. Compiled twice (variants.txt): VALUE_FLOAT computes in
// float32, VALUE_INT in int64 (exact integer arithmetic), VALUE_DOUBLE in
// float64 (for float64 operands; only on devices with shaderFloat64, and
// only the ops without transcendental functions, which GLSL lacks for
// doubles); loads and stores convert from and to each operand's dtype.
#include "elementwise_ops.h"

#if defined(VALUE_INT)
#define V int64_t
#elif defined(VALUE_DOUBLE)
#define V double
#else
#define V float
#endif

layout(local_size_x_id = 0) in;
layout(constant_id = 1) const uint OP = 0;
layout(constant_id = 2) const uint DT_0 = 0;  // out
layout(constant_id = 3) const uint DT_1 = 0;  // a
layout(constant_id = 4) const uint DT_2 = 0;  // b
layout(constant_id = 5) const uint DT_3 = 0;  // c
layout(constant_id = 6) const uint NIN = 1;   // inputs read

#include "dtype_access.glsl"

layout(std430, set = 0, binding = 0) readonly buffer Params {
  uint off[4];
  uint n;
  uint ndim;
  uint size[EW_MAX_DIMS];  // innermost first
  int stride[4 * EW_MAX_DIMS];  // operand k's stride of dim d at [k * EW_MAX_DIMS + d], in elements
  float fs0;                    // float scalars (alpha, fill value, clamp bounds)
  float fs1;
  uint is0_lo;                  // int64 scalars, as two words
  int is0_hi;
  uint is1_lo;
  int is1_hi;
  uint flags;                   // clamp: bit 0 min present, bit 1 max present; gelu: bit 0 tanh
  uint ds0_lo;                  // float64 scalars, as their bits (for VALUE_DOUBLE)
  uint ds0_hi;
  uint ds1_lo;
  uint ds1_hi;
}
p;

DECLARE_TENSOR(0, 1)
DECLARE_TENSOR(1, 2)
DECLARE_TENSOR(2, 3)
DECLARE_TENSOR(3, 4)

#ifdef VALUE_INT
V scalar0() { return (int64_t(p.is0_hi) << 32) | int64_t(p.is0_lo); }
V scalar1() { return (int64_t(p.is1_hi) << 32) | int64_t(p.is1_lo); }
bool is_nan(V x) { return false; }
bool is_finite(V x) { return true; }
#elif defined(VALUE_DOUBLE)
V scalar0() { return packDouble2x32(uvec2(p.ds0_lo, p.ds0_hi)); }
V scalar1() { return packDouble2x32(uvec2(p.ds1_lo, p.ds1_hi)); }
bool is_nan(V x) { return isnan(x); }
bool is_finite(V x) { return !isnan(x) && !isinf(x); }
#else
V scalar0() { return p.fs0; }
V scalar1() { return p.fs1; }
bool is_nan(V x) { return isnan(x); }
bool is_finite(V x) { return !isnan(x) && !isinf(x); }

// erf to float32 accuracy (Abramowitz and Stegun 7.1.26 is 1.5e-7 absolute;
// this uses the same form with the exponential factor computed in float).
float erf_approx(float x) {
  float s = sign(x);
  float a = abs(x);
  float t = 1.0 / (1.0 + 0.3275911 * a);
  float y = 1.0 - (((((1.061405429 * t - 1.453152027) * t) + 1.421413741) * t - 0.284496736) * t + 0.254829592) * t *
                      exp(-a * a);
  return s * y;
}
float gelu_tanh_inner(float x) { return 0.7978845608028654 * (x + 0.044715 * x * x * x); }
#endif

V b2v(bool b) { return b ? V(1) : V(0); }

V apply(V a, V b, V c) {
  if (OP == EW_COPY) return a;
  if (OP == EW_FILL) return scalar0();
  if (OP == EW_NEG) return -a;
  if (OP == EW_ABS) return abs(a);
  if (OP == EW_SIGN) return sign(a);
  if (OP == EW_SQUARE) return a * a;
  if (OP == EW_ISNAN) return b2v(is_nan(a));
  if (OP == EW_ISFINITE) return b2v(is_finite(a));
  if (OP == EW_LOGICAL_NOT) return b2v(a == V(0));
  // relu keeps NaN (x > 0 is false for NaN, but max(NaN, 0) is NaN in hearth's CPU kernel: x < 0 ? 0 : x)
  if (OP == EW_RELU) return a < V(0) ? V(0) : a;
  if (OP == EW_RELU_BACKWARD) return b > V(0) ? a : V(0);
  if (OP == EW_ADD) return a + scalar0() * b;
  if (OP == EW_SUB) return a - scalar0() * b;
  if (OP == EW_MUL) return a * b;
  if (OP == EW_MAXIMUM) return is_nan(a) || is_nan(b) ? (is_nan(a) ? a : b) : max(a, b);
  if (OP == EW_MINIMUM) return is_nan(a) || is_nan(b) ? (is_nan(a) ? a : b) : min(a, b);
  if (OP == EW_EQ) return b2v(a == b);
  if (OP == EW_NE) return b2v(a != b);
  if (OP == EW_LT) return b2v(a < b);
  if (OP == EW_LE) return b2v(a <= b);
  if (OP == EW_GT) return b2v(a > b);
  if (OP == EW_GE) return b2v(a >= b);
  if (OP == EW_LOGICAL_AND) return b2v(a != V(0) && b != V(0));
  if (OP == EW_LOGICAL_OR) return b2v(a != V(0) || b != V(0));
  if (OP == EW_LOGICAL_XOR) return b2v((a != V(0)) != (b != V(0)));
  if (OP == EW_WHERE) return c != V(0) ? a : b;
  if (OP == EW_CLAMP) {
    if (is_nan(a)) return a;
    V r = a;
    if ((p.flags & 1u) != 0u) r = max(r, scalar0());
    if ((p.flags & 2u) != 0u) r = min(r, scalar1());
    return r;
  }
#ifdef VALUE_DOUBLE
  if (OP == EW_DIV) return a / b;
  if (OP == EW_SQRT) return sqrt(a);
  if (OP == EW_RSQRT) return inversesqrt(a);
#endif
#ifdef VALUE_FLOAT
  if (OP == EW_DIV) return a / b;
  if (OP == EW_EXP) return exp(a);
  if (OP == EW_LOG) return log(a);
  if (OP == EW_SQRT) return sqrt(a);
  if (OP == EW_RSQRT) return inversesqrt(a);
  if (OP == EW_SIGMOID) return 1.0 / (1.0 + exp(-a));
  if (OP == EW_TANH) return tanh(a);
  if (OP == EW_SILU) return a / (1.0 + exp(-a));
  if (OP == EW_GELU) {
    if ((p.flags & 1u) != 0u) return 0.5 * a * (1.0 + tanh(gelu_tanh_inner(a)));
    return 0.5 * a * (1.0 + erf_approx(a * 0.7071067811865476));
  }
  if (OP == EW_GELU_BACKWARD) {  // a = grad, b = x
    float x = b;
    if ((p.flags & 1u) != 0u) {
      float t = tanh(gelu_tanh_inner(x));
      float dinner = 0.7978845608028654 * (1.0 + 3.0 * 0.044715 * x * x);
      return a * (0.5 * (1.0 + t) + 0.5 * x * (1.0 - t * t) * dinner);
    }
    float cdf = 0.5 * (1.0 + erf_approx(x * 0.7071067811865476));
    float pdf = 0.3989422804014327 * exp(-0.5 * x * x);
    return a * (cdf + x * pdf);
  }
  if (OP == EW_POW) {
    // GLSL's pow is undefined for a < 0 and for a == 0; C's is not.
    if (b == 0.0) return 1.0;
    if (a == 0.0) return b > 0.0 ? 0.0 : 1.0 / 0.0;
    if (a < 0.0) {
      if (floor(b) != b) return 0.0 / 0.0;
      float m = pow(-a, b);
      return mod(b, 2.0) == 1.0 ? -m : m;
    }
    return pow(a, b);
  }
#endif
#ifdef VALUE_INT
  if (OP == EW_POW) {
    if (b < 0) return a == 1 ? V(1) : (a == -1 ? ((b & 1) != 0 ? V(-1) : V(1)) : V(0));
    V r = 1;
    V base = a;
    V e = b;
    while (e > 0) {
      if ((e & 1) != 0) r *= base;
      base *= base;
      e >>= 1;
    }
    return r;
  }
#endif
  return a;
}

void main() {
  const uint step = gl_NumWorkGroups.x * gl_WorkGroupSize.x;
  for (uint i = gl_GlobalInvocationID.x; i < p.n; i += step) {
    int o0 = int(p.off[0]), o1 = int(p.off[1]), o2 = int(p.off[2]), o3 = int(p.off[3]);
    uint rem = i;
    for (uint d = 0; d < p.ndim; ++d) {
      const uint c = rem % p.size[d];
      rem /= p.size[d];
      o0 += int(c) * p.stride[d];
      o1 += int(c) * p.stride[EW_MAX_DIMS + d];
      o2 += int(c) * p.stride[2 * EW_MAX_DIMS + d];
      o3 += int(c) * p.stride[3 * EW_MAX_DIMS + d];
    }
    const V a = NIN >= 1 ? load_1(uint(o1)) : V(0);
    const V b = NIN >= 2 ? load_2(uint(o2)) : V(0);
    const V c = NIN >= 3 ? load_3(uint(o3)) : V(0);
    store_0(uint(o0), apply(a, b, c));
  }
}
