#version 450
// layer_norm over dense rows x [M, K], float32 (hearth/dispatch/schemas/layer_norm.h).
//   OP 0 forward, one workgroup per row: b1 x, b2 weight?, b3 bias?, b4 y, b5 mean, b6 rstd
//   OP 1 grad_x, one workgroup per row: b1 grad_y, b2 weight?, b3 x, b4 grad_x, b5 mean, b6 rstd
//        grad_x = rstd * (g w - mean(g w) - xhat * mean(g w xhat))
//   OP 2 grad_weight and grad_bias, one workgroup per column k (sums over the M rows):
//        b1 grad_y, b3 x, b5 mean, b6 rstd, b7 grad_weight?, b8 grad_bias?
layout(local_size_x_id = 0) in;
#define WG gl_WorkGroupSize.x
layout(constant_id = 1) const uint OP = 0;

layout(std430, set = 0, binding = 0) readonly buffer Params {
  uint off[8];
  uint M, K;
  uint flags;  // 1 weight, 2 bias (forward); 4 grad_weight, 8 grad_bias wanted
  float eps;
}
p;
layout(std430, set = 0, binding = 1) readonly buffer B1 { float b1[]; };
layout(std430, set = 0, binding = 2) readonly buffer B2 { float b2[]; };
layout(std430, set = 0, binding = 3) readonly buffer B3 { float b3[]; };
layout(std430, set = 0, binding = 4) writeonly buffer B4 { float b4[]; };
layout(std430, set = 0, binding = 5) buffer B5 { float b5[]; };
layout(std430, set = 0, binding = 6) buffer B6 { float b6[]; };
layout(std430, set = 0, binding = 7) writeonly buffer B7 { float b7[]; };
layout(std430, set = 0, binding = 8) writeonly buffer B8 { float b8[]; };

#include "row_reduce.glsl"

bool has(uint bit) { return (p.flags & bit) != 0u; }

void main() {
  const uint t = gl_LocalInvocationID.x;
  if (OP == 2u) {
    for (uint k = gl_WorkGroupID.x; k < p.K; k += gl_NumWorkGroups.x) {
      float sw = 0.0, sb = 0.0;
      for (uint r = t; r < p.M; r += WG) {
        const float g = b1[p.off[0] + r * p.K + k];
        sw += g * (b3[p.off[2] + r * p.K + k] - b5[p.off[4] + r]) * b6[p.off[5] + r];
        sb += g;
      }
      sw = workgroup_sum(sw);
      sb = workgroup_sum(sb);
      if (t == 0u) {
        if (has(4u)) b7[p.off[6] + k] = sw;
        if (has(8u)) b8[p.off[7] + k] = sb;
      }
    }
    return;
  }
  for (uint r = gl_WorkGroupID.x; r < p.M; r += gl_NumWorkGroups.x) {
    const uint base = r * p.K;
    if (OP == 0u) {
      float s = 0.0;
      for (uint k = t; k < p.K; k += WG) s += b1[p.off[0] + base + k];
      const float mean = workgroup_sum(s) / float(p.K);
      float ss = 0.0;
      for (uint k = t; k < p.K; k += WG) {
        const float d = b1[p.off[0] + base + k] - mean;
        ss += d * d;
      }
      const float rstd = 1.0 / sqrt(workgroup_sum(ss) / float(p.K) + p.eps);
      for (uint k = t; k < p.K; k += WG) {
        float v = (b1[p.off[0] + base + k] - mean) * rstd;
        if (has(1u)) v *= b2[p.off[1] + k];
        if (has(2u)) v += b3[p.off[2] + k];
        b4[p.off[3] + base + k] = v;
      }
      if (t == 0u) {
        b5[p.off[4] + r] = mean;
        b6[p.off[5] + r] = rstd;
      }
    } else {
      const float mean = b5[p.off[4] + r], rstd = b6[p.off[5] + r];
      float sgw = 0.0, sgwx = 0.0;
      for (uint k = t; k < p.K; k += WG) {
        const float gw = b1[p.off[0] + base + k] * (has(1u) ? b2[p.off[1] + k] : 1.0);
        sgw += gw;
        sgwx += gw * (b3[p.off[2] + base + k] - mean) * rstd;
      }
      const float mean_gw = workgroup_sum(sgw) / float(p.K);
      const float mean_gwx = workgroup_sum(sgwx) / float(p.K);
      for (uint k = t; k < p.K; k += WG) {
        const float gw = b1[p.off[0] + base + k] * (has(1u) ? b2[p.off[1] + k] : 1.0);
        const float xhat = (b3[p.off[2] + base + k] - mean) * rstd;
        b4[p.off[3] + base + k] = rstd * (gw - mean_gw - xhat * mean_gwx);
      }
    }
  }
}
