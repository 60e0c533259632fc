#version 450
// softmax and log_softmax along D of x [outer, D, inner] (contiguous), and
// their backwards. One workgroup per (outer, inner) row of D elements.
//   OP 0 softmax(x)              1 log_softmax(x)
//   OP 2 softmax_backward:       gx = y * (gy - sum_D(gy * y))      (a = gy, b = y)
//   OP 3 log_softmax_backward:   gx = gy - exp(y) * sum_D(gy)      (a = gy, b = y)
layout(local_size_x_id = 0) in;
#define WG gl_WorkGroupSize.x
layout(constant_id = 1) const uint OP = 0;

layout(std430, set = 0, binding = 0) readonly buffer Params {
  uint off_a;
  uint off_b;
  uint off_out;
  uint outer;
  uint dim;
  uint inner;
}
p;
layout(std430, set = 0, binding = 1) readonly buffer A { float a[]; };
layout(std430, set = 0, binding = 2) readonly buffer B { float b[]; };
layout(std430, set = 0, binding = 3) writeonly buffer Out { float o[]; };

#include "row_reduce.glsl"

void main() {
  const uint t = gl_LocalInvocationID.x;
  const uint rows = p.outer * p.inner;
  for (uint row = gl_WorkGroupID.x; row < rows; row += gl_NumWorkGroups.x) {
    const uint base = (row / p.inner) * p.dim * p.inner + row % p.inner;
    const uint step = p.inner;
    if (OP <= 1u) {
      float m = -1.0 / 0.0;
      for (uint k = t; k < p.dim; k += WG) {
        const float v = a[p.off_a + base + k * step];
        if (isnan(v) || v > m) m = v;
      }
      m = workgroup_max(m);
      if (isinf(m)) m = 0.0;  // a fully masked row comes out NaN, as on the CPU
      float s = 0.0;
      for (uint k = t; k < p.dim; k += WG) s += exp(a[p.off_a + base + k * step] - m);
      s = workgroup_sum(s);
      if (OP == 0u) {
        const float inv = 1.0 / s;
        for (uint k = t; k < p.dim; k += WG) o[p.off_out + base + k * step] = exp(a[p.off_a + base + k * step] - m) * inv;
      } else {
        const float lse = m + log(s);
        for (uint k = t; k < p.dim; k += WG) o[p.off_out + base + k * step] = a[p.off_a + base + k * step] - lse;
      }
    } else {
      float s = 0.0;
      for (uint k = t; k < p.dim; k += WG) {
        const float gy = a[p.off_a + base + k * step];
        s += OP == 2u ? gy * b[p.off_b + base + k * step] : gy;
      }
      s = workgroup_sum(s);
      for (uint k = t; k < p.dim; k += WG) {
        const float gy = a[p.off_a + base + k * step];
        const float y = b[p.off_b + base + k * step];
        o[p.off_out + base + k * step] = OP == 2u ? y * (gy - s) : gy - exp(y) * s;
      }
    }
  }
}
