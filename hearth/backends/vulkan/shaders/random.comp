#version 450
// uniform_ (OP 0), normal_ (OP 1) and randint_ (OP 2) into a dense tensor,
// element by element as hearth/dispatch/schemas/random.h maps them to Philox
// counters, so the numbers are the CPU's (normal_ computes the Box-Muller
// transform in float32 where the CPU uses double: equal to float32 rounding).
// One invocation per counter: 4 elements (uniform) or 2 (normal, randint).
//   DT (constant 2): the output's dtype code (float32; int64/int32 for randint)
#extension GL_EXT_shader_explicit_arithmetic_types_int64 : require
layout(local_size_x_id = 0) in;
layout(constant_id = 1) const uint OP = 0;
layout(constant_id = 2) const uint DT = 0;

layout(std430, set = 0, binding = 0) readonly buffer Params {
  uint off_t;
  uint n;
  uvec2 seed;    // 8-aligned: off_t and n come first
  uvec2 offset;
  float lo;      // uniform: low; normal: mean
  float span;    // uniform: high - low; normal: std
  uint low_lo;   // randint: low, and high - low (as uint64)
  int low_hi;
  uint range_lo;
  uint range_hi;
}
p;
layout(std430, set = 0, binding = 1) writeonly buffer TF { float tf[]; };
layout(std430, set = 0, binding = 1) writeonly buffer TL { int64_t tl[]; };
layout(std430, set = 0, binding = 1) writeonly buffer TI { int ti[]; };

#include "philox.glsl"

float unit_float(uint x) { return float(x >> 8) * (1.0 / 16777216.0); }

void main() {
  const uint per = OP == 0u ? 4u : 2u;
  const uint counters = (p.n + per - 1u) / per;
  const uint step = gl_NumWorkGroups.x * gl_WorkGroupSize.x;
  for (uint c = gl_GlobalInvocationID.x; c < counters; c += step) {
    const uvec4 r = philox4x32(counter_add(p.offset, c), p.seed);
    for (uint k = 0; k < per; ++k) {
      const uint i = c * per + k;
      if (i >= p.n) break;
      if (OP == 0u) {
        tf[p.off_t + i] = p.lo + p.span * unit_float(r[k]);
      } else if (OP == 1u) {
        const float u1 = (float(r[2 * k] >> 8) + 1.0) * (1.0 / 16777216.0);
        const float u2 = float(r[2 * k + 1] >> 8) * (1.0 / 16777216.0);
        const float z = sqrt(-2.0 * log(u1)) * cos(6.283185307179586 * u2);
        tf[p.off_t + i] = p.lo + p.span * z;
      } else {
        const uint64_t bits = (uint64_t(r[2 * k]) << 32) | uint64_t(r[2 * k + 1]);
        const uint64_t range = (uint64_t(p.range_hi) << 32) | uint64_t(p.range_lo);
        const int64_t low = (int64_t(p.low_hi) << 32) | int64_t(p.low_lo);
        const int64_t v = low + int64_t(bits % range);
        if (DT == 0u) tf[p.off_t + i] = float(v);
        else if (DT == 4u) tl[p.off_t + i] = v;
        else ti[p.off_t + i] = int(v);
      }
    }
  }
}
