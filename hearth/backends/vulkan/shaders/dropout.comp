#version 450
// dropout (OP 0) and dropout_backward (OP 1) over dense [n] float32
// (hearth/dispatch/schemas/dropout.h). Element i is kept when lane i % 4 of
// philox(offset + i / 4), as a 24-bit fraction, is >= p: exactly when its top
// 24 bits are >= keep_from = ceil(p * 2^24), computed on the host.
//   OP 0: b1 x, b2 y, b3 mask (bool)      OP 1: b1 grad_y, b2 grad_x, b3 mask
#extension GL_EXT_shader_8bit_storage : require
layout(local_size_x_id = 0) in;
layout(constant_id = 1) const uint OP = 0;

layout(std430, set = 0, binding = 0) readonly buffer Params {
  uint off_a;
  uint off_b;
  uint off_m;
  uint n;
  uvec2 seed;  // 8-aligned: four words come first
  uvec2 offset;
  uint keep_from;
  float scale;
}
p;
layout(std430, set = 0, binding = 1) readonly buffer A { float a[]; };
layout(std430, set = 0, binding = 2) writeonly buffer B { float b[]; };
layout(std430, set = 0, binding = 3) buffer M { uint8_t m[]; };

#include "philox.glsl"

void main() {
  const uint step = gl_NumWorkGroups.x * gl_WorkGroupSize.x;
  if (OP == 0u) {
    const uint counters = (p.n + 3u) / 4u;
    for (uint c = gl_GlobalInvocationID.x; c < counters; c += step) {
      const uvec4 r = philox4x32(counter_add(p.offset, c), p.seed);
      for (uint k = 0; k < 4u; ++k) {
        const uint i = 4u * c + k;
        if (i >= p.n) break;
        const bool keep = (r[k] >> 8) >= p.keep_from;
        m[p.off_m + i] = uint8_t(keep ? 1u : 0u);
        b[p.off_b + i] = keep ? a[p.off_a + i] * p.scale : 0.0;
      }
    }
  } else {
    for (uint i = gl_GlobalInvocationID.x; i < p.n; i += step)
      b[p.off_b + i] = uint(m[p.off_m + i]) != 0u ? a[p.off_a + i] * p.scale : 0.0;
  }
}
