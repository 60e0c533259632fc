#version 450
// One optimizer update of one dense float32 parameter, in place
// (hearth/dispatch/schemas/optim.h; the coefficients come from the host,
// computed in double and rounded once, as on the CPU). A 16-bit parameter
// arrives widened to float32 (optim.cpp) with STORED naming its dtype: every
// value the CPU stores and reads back (the state, the new parameter) is
// rounded to it here first, so later arithmetic sees what the CPU's does
// (an exp_avg_sq that underflows float16 stays zero, as there).
//   OP 0 sgd_step:  b1 param, b2 grad, b3 momentum_buffer?
//   OP 1 adam_step: b1 param, b2 grad, b3 exp_avg, b4 exp_avg_sq, b5 max_exp_avg_sq?
layout(local_size_x_id = 0) in;
layout(constant_id = 1) const uint OP = 0;
layout(constant_id = 2) const uint STORED = 0;  // DT_FLOAT32, DT_FLOAT16 or DT_BFLOAT16

#include "half_words.glsl"
#include "elementwise_ops.h"

// x as the parameter's dtype stores it, back in float32.
float stored(float x) {
  if (STORED == DT_FLOAT16) return half_to_float(float_to_half(x));
  if (STORED == DT_BFLOAT16) return bf16_to_float(float_to_bf16(x));
  return x;
}

layout(std430, set = 0, binding = 0) readonly buffer Params {
  uint off_p;
  uint off_g;
  uint off_3;
  uint off_4;
  uint off_5;
  uint n;
  uint flags;  // sgd: 1 use buffer, 2 init buffer, 4 nesterov; adam: 1 amsgrad
  float sign;  // -1 to maximize
  // sgd: lr, weight_decay, momentum, 1 - dampening
  // adam: beta1, beta2, 1 - beta1, 1 - beta2, eps, step_size, sqrt(bias_correction2), l2, decay
  float c[9];
}
p;
layout(std430, set = 0, binding = 1) buffer P { float param[]; };
layout(std430, set = 0, binding = 2) readonly buffer G { float grad[]; };
layout(std430, set = 0, binding = 3) buffer S3 { float s3[]; };
layout(std430, set = 0, binding = 4) buffer S4 { float s4[]; };
layout(std430, set = 0, binding = 5) buffer S5 { float s5[]; };

void main() {
  const uint step = gl_NumWorkGroups.x * gl_WorkGroupSize.x;
  for (uint i = gl_GlobalInvocationID.x; i < p.n; i += step) {
    if (OP == 0u) {
      const float lr = p.c[0], wd = p.c[1], mom = p.c[2], keep = p.c[3];
      const float pv = param[p.off_p + i];
      float d = p.sign * grad[p.off_g + i] + wd * pv;
      if ((p.flags & 1u) != 0u) {
        // Later steps read the buffer as stored, so use the rounded value.
        const float bv = stored((p.flags & 2u) != 0u ? d : mom * s3[p.off_3 + i] + keep * d);
        s3[p.off_3 + i] = bv;
        d = (p.flags & 4u) != 0u ? d + mom * bv : bv;
      }
      param[p.off_p + i] = stored(pv - lr * d);
    } else {
      const float beta1 = p.c[0], beta2 = p.c[1], omb1 = p.c[2], omb2 = p.c[3], eps = p.c[4];
      const float step_size = p.c[5], bc2_sqrt = p.c[6], l2 = p.c[7], decay = p.c[8];
      const float pv = param[p.off_p + i] * decay;
      const float gv = p.sign * grad[p.off_g + i] + l2 * pv;
      const float mv = stored(beta1 * s3[p.off_3 + i] + omb1 * gv);
      const float vv = stored(beta2 * s4[p.off_4 + i] + omb2 * gv * gv);
      s3[p.off_3 + i] = mv;
      s4[p.off_4 + i] = vv;
      float vd = vv;
      if ((p.flags & 1u) != 0u) {
        vd = max(s5[p.off_5 + i], vv);
        s5[p.off_5 + i] = vd;
      }
      const float denom = sqrt(vd) / bc2_sqrt + eps;
      param[p.off_p + i] = stored(pv - step_size * (mv / denom));
    }
  }
}
