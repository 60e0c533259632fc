#version 450
// embedding (OP 0: out[k, d] = weight[idx[k], d], a NaN row for an index
// outside [0, V)) and embedding_backward (OP 1: grad_weight[idx[k], d] +=
// grad_out[k, d], grad_weight zeroed before; rows of padding_idx and bad
// indices get nothing), float32, dense (hearth/dispatch/schemas/embedding.h).
// The backward adds with a compare-and-swap loop on the float's bits, which
// needs only 32-bit integer atomics (every Vulkan device has them); rows
// that repeat an index add in no fixed order.
//   b1 weight or grad_out, b2 indices (int64 or int32: constant 2), b3 out or grad_weight
#extension GL_EXT_shader_explicit_arithmetic_types_int64 : require
layout(local_size_x_id = 0) in;
layout(constant_id = 1) const uint OP = 0;
layout(constant_id = 2) const uint IDX64 = 1;

layout(std430, set = 0, binding = 0) readonly buffer Params {
  uint off_a;
  uint off_i;
  uint off_o;
  uint K, D, V;
  uint pad_lo;
  int pad_hi;
}
p;
layout(std430, set = 0, binding = 1) readonly buffer A { float a[]; };
layout(std430, set = 0, binding = 2) readonly buffer IL { int64_t idx64[]; };
layout(std430, set = 0, binding = 2) readonly buffer II { int idx32[]; };
layout(std430, set = 0, binding = 3) buffer O { float o[]; };
layout(std430, set = 0, binding = 3) buffer OU { uint ou[]; };

int64_t index_of(uint k) { return IDX64 != 0u ? idx64[p.off_i + k] : int64_t(idx32[p.off_i + k]); }

void main() {
  const uint step = gl_NumWorkGroups.x * gl_WorkGroupSize.x;
  const uint total = p.K * p.D;
  const int64_t padding = (int64_t(p.pad_hi) << 32) | int64_t(p.pad_lo);
  for (uint i = gl_GlobalInvocationID.x; i < total; i += step) {
    const uint k = i / p.D, d = i % p.D;
    const int64_t v = index_of(k);
    const bool ok = v >= 0 && v < int64_t(p.V);
    if (OP == 0u) {
      o[p.off_o + i] = ok ? a[p.off_a + uint(v) * p.D + d] : 0.0 / 0.0;
    } else if (ok && v != padding) {
      const float g = a[p.off_a + i];
      const uint at = p.off_o + uint(v) * p.D + d;
      uint seen = ou[at];
      for (;;) {
        const uint want = floatBitsToUint(uintBitsToFloat(seen) + g);
        const uint before = atomicCompSwap(ou[at], seen, want);
        if (before == seen) break;
        seen = before;
      }
    }
  }
}
