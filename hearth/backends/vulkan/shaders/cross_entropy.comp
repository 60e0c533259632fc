#version 450
// cross_entropy (OP 0) and cross_entropy_backward (OP 1) over dense [M, C]
// rows, one workgroup per row (formulas in hearth/dispatch/schemas/loss.h).
// A target outside [0, C) other than ignore_index gives a NaN loss and
// target weight (forward) and a zero gradient row (backward): the device
// cannot raise.
//   OP 0: inputs x, target, weight?;  outputs lse (b4), loss (b5), target_weight (b6)
//   OP 1: inputs x, target, weight?, lse (b4), grad_loss (b5); output grad_x (b6)
#extension GL_EXT_shader_explicit_arithmetic_types_int64 : require
layout(local_size_x_id = 0) in;
#define WG gl_WorkGroupSize.x
layout(constant_id = 1) const uint OP = 0;

layout(std430, set = 0, binding = 0) readonly buffer Params {
  uint off_x;
  uint off_t;
  uint off_w;
  uint off_4;
  uint off_5;
  uint off_6;
  uint rows;
  uint classes;
  uint has_weight;
  uint ignore_lo;
  int ignore_hi;
  float smoothing;
}
p;
layout(std430, set = 0, binding = 1) readonly buffer X { float x[]; };
layout(std430, set = 0, binding = 2) readonly buffer T { int64_t target[]; };
layout(std430, set = 0, binding = 3) readonly buffer W { float w[]; };
layout(std430, set = 0, binding = 4) buffer B4 { float b4[]; };
layout(std430, set = 0, binding = 5) buffer B5 { float b5[]; };
layout(std430, set = 0, binding = 6) buffer B6 { float b6[]; };

#include "row_reduce.glsl"

float weight(uint c) { return p.has_weight != 0u ? w[p.off_w + c] : 1.0; }

void main() {
  const uint tid = gl_LocalInvocationID.x;
  const uint C = p.classes;
  const int64_t ignore = (int64_t(p.ignore_hi) << 32) | int64_t(p.ignore_lo);
  const float ls = p.smoothing;
  for (uint r = gl_WorkGroupID.x; r < p.rows; r += gl_NumWorkGroups.x) {
    const uint base = p.off_x + r * C;
    const int64_t t = target[p.off_t + r];
    const bool ignored = t == ignore;
    const bool bad = !ignored && (t < 0 || t >= int64_t(C));
    if (OP == 0u) {
      float m = -1.0 / 0.0;
      for (uint c = tid; c < C; c += WG) {
        const float v = x[base + c];
        if (isnan(v) || v > m) m = v;
      }
      m = workgroup_max(m);
      const float shift = isinf(m) ? 0.0 : m;
      float s = 0.0;
      for (uint c = tid; c < C; c += WG) s += exp(x[base + c] - shift);
      s = workgroup_sum(s);
      const float lse = log(s) + shift;
      float smoothed = 0.0;
      if (ls > 0.0)
        for (uint c = tid; c < C; c += WG) smoothed += weight(c) * (lse - x[base + c]);
      smoothed = workgroup_sum(smoothed);
      if (tid == 0u) {
        b4[p.off_4 + r] = lse;
        if (ignored) {
          b5[p.off_5 + r] = 0.0;
          b6[p.off_6 + r] = 0.0;
        } else if (bad) {
          b5[p.off_5 + r] = 0.0 / 0.0;
          b6[p.off_6 + r] = 0.0 / 0.0;
        } else {
          const float wt = weight(uint(t));
          float l = (1.0 - ls) * wt * (lse - x[base + uint(t)]);
          if (ls > 0.0) l += ls / float(C) * smoothed;
          b5[p.off_5 + r] = l;
          b6[p.off_6 + r] = wt;
        }
      }
    } else {
      float wsum = float(C);
      if (p.has_weight != 0u) {
        float part = 0.0;
        for (uint c = tid; c < C; c += WG) part += w[p.off_w + c];
        wsum = workgroup_sum(part);
      }
      const uint gbase = p.off_6 + r * C;
      if (ignored || bad) {
        for (uint c = tid; c < C; c += WG) b6[gbase + c] = 0.0;
        continue;
      }
      const float g = b5[p.off_5 + r];
      const float lse = b4[p.off_4 + r];
      const float wt = weight(uint(t));
      const float per_class = ls / float(C);
      const float coef = (1.0 - ls) * wt + per_class * wsum;
      for (uint c = tid; c < C; c += WG) {
        const float prob = exp(x[base + c] - lse);
        float v = coef * prob - per_class * weight(c);
        if (int64_t(c) == t) v -= (1.0 - ls) * wt;
        b6[gbase + c] = g * v;
      }
    }
  }
}
