#version 450
// batch_norm (OP 0) and batch_norm_backward (OP 1) over dense x [N, C, S],
// float32, one workgroup per channel (hearth/dispatch/schemas/batch_norm.h).
// Statistics take two passes (mean, then squared deviations), in float32.
//   OP 0: b1 x, b2 running_mean?, b3 running_var?, b4 weight?, b5 bias?, b6 y, b7 mean, b8 invstd, b9 affine?
//   OP 1: b1 grad_y, b2 x, b3 mean, b4 invstd, b5 weight?, b6 the ReLU's saved output y, or the forward's
//         affine map [2, C] to recompute its mask from (flag 1024), b7 grad_x?, b8 grad_weight?, b9 grad_bias?,
//         b10 grad_residual? (the masked grad_y)
layout(local_size_x_id = 0) in;
#define WG gl_WorkGroupSize.x
layout(constant_id = 1) const uint OP = 0;

layout(std430, set = 0, binding = 0) readonly buffer Params {
  uint off[10];
  uint N, C, S;
  uint flags;  // 1 training, 2 relu; present: 4 running_mean, 8 running_var, 16 weight, 32 bias,
               // 64 affine, 128 grad_x, 256 grad_weight, 512 grad_bias, 1024 mask from the affine map,
               // 2048 grad_residual
  float momentum;
  float eps;
}
p;
layout(std430, set = 0, binding = 1) buffer B1 { float b1[]; };
layout(std430, set = 0, binding = 2) buffer B2 { float b2[]; };
layout(std430, set = 0, binding = 3) buffer B3 { float b3[]; };
layout(std430, set = 0, binding = 4) buffer B4 { float b4[]; };
layout(std430, set = 0, binding = 5) buffer B5 { float b5[]; };
layout(std430, set = 0, binding = 6) buffer B6 { float b6[]; };
layout(std430, set = 0, binding = 7) buffer B7 { float b7[]; };
layout(std430, set = 0, binding = 8) buffer B8 { float b8[]; };
layout(std430, set = 0, binding = 9) buffer B9 { float b9[]; };
layout(std430, set = 0, binding = 10) writeonly buffer B10 { float b10[]; };

#include "row_reduce.glsl"

bool has(uint bit) { return (p.flags & bit) != 0u; }

// The backward's grad_y at `at` of channel c, zero where a fused ReLU cut the output.
float masked_grad(uint at, uint c) {
  const float g = b1[p.off[0] + at];
  if (!has(2u)) return g;
  const float y = has(1024u) ? fma(b2[p.off[1] + at], b6[p.off[5] + c], b6[p.off[5] + p.C + c]) : b6[p.off[5] + at];
  return y > 0.0 ? g : 0.0;
}

void main() {
  const uint t = gl_LocalInvocationID.x;
  const uint count = p.N * p.S;
  for (uint c = gl_WorkGroupID.x; c < p.C; c += gl_NumWorkGroups.x) {
    if (OP == 0u) {
      float mean, invstd;
      if (has(1u)) {
        float s = 0.0;
        for (uint j = t; j < count; j += WG) s += b1[p.off[0] + ((j / p.S) * p.C + c) * p.S + j % p.S];
        mean = workgroup_sum(s) / float(count);
        float ss = 0.0;
        for (uint j = t; j < count; j += WG) {
          const float d = b1[p.off[0] + ((j / p.S) * p.C + c) * p.S + j % p.S] - mean;
          ss += d * d;
        }
        ss = workgroup_sum(ss);
        invstd = 1.0 / sqrt(ss / float(count) + p.eps);
        if (t == 0u) {
          if (has(4u)) b2[p.off[1] + c] = (1.0 - p.momentum) * b2[p.off[1] + c] + p.momentum * mean;
          if (has(8u))
            b3[p.off[2] + c] = (1.0 - p.momentum) * b3[p.off[2] + c] + p.momentum * (ss / float(count - 1u));
        }
      } else {
        mean = b2[p.off[1] + c];
        invstd = 1.0 / sqrt(b3[p.off[2] + c] + p.eps);
      }
      const float scale = invstd * (has(16u) ? b4[p.off[3] + c] : 1.0);
      const float shift = (has(32u) ? b5[p.off[4] + c] : 0.0) - mean * scale;
      if (t == 0u) {
        b7[p.off[6] + c] = mean;
        b8[p.off[7] + c] = invstd;
        if (has(64u)) {
          b9[p.off[8] + c] = scale;
          b9[p.off[8] + p.C + c] = shift;
        }
      }
      for (uint j = t; j < count; j += WG) {
        const uint at = ((j / p.S) * p.C + c) * p.S + j % p.S;
        float v = b1[p.off[0] + at] * scale + shift;
        if (has(2u) && !(v > 0.0)) v = 0.0;
        b6[p.off[5] + at] = v;
      }
    } else {
      const float mean = b3[p.off[2] + c], invstd = b4[p.off[3] + c];
      float sg = 0.0, sgx = 0.0;
      for (uint j = t; j < count; j += WG) {
        const uint at = ((j / p.S) * p.C + c) * p.S + j % p.S;
        const float g = masked_grad(at, c);
        if (has(2048u)) b10[p.off[9] + at] = g;
        sg += g;
        sgx += g * (b2[p.off[1] + at] - mean);
      }
      sg = workgroup_sum(sg);
      const float sum_gxhat = workgroup_sum(sgx) * invstd;
      if (t == 0u) {
        if (has(256u)) b8[p.off[7] + c] = sum_gxhat;
        if (has(512u)) b9[p.off[8] + c] = sg;
      }
      if (has(128u)) {
        const float k = invstd * (has(16u) ? b5[p.off[4] + c] : 1.0);
        const float mg = has(1u) ? sg / float(count) : 0.0;
        const float mgx = has(1u) ? sum_gxhat / float(count) : 0.0;
        for (uint j = t; j < count; j += WG) {
          const uint at = ((j / p.S) * p.C + c) * p.S + j % p.S;
          const float g = masked_grad(at, c);
          const float xhat = (b2[p.off[1] + at] - mean) * invstd;
          b7[p.off[6] + at] = k * (g - mg - xhat * mgx);
        }
      }
    }
  }
}
