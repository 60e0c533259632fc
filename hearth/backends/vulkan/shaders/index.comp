#version 450
// Index-based gathering and scattering, float32 values, int64 indices
// (hearth/dispatch/schemas/index.h). Every index is tested before use: an
// out-of-range one is skipped (a read yields NaN, an addition is dropped)
// and recorded in the device's error slot (index.cpp raises it at the next
// indexing call), claimed once: word 0 goes 0 -> 1 (claimed) -> 2 (written).
//   OP 0 index_select: x [outer, n, inner], index [k], out [outer, k, inner], all dense
//   OP 1 gather:       out (dense, index's shape)[c] = x[c with c[dim] = index[c]]; x and index strided
//   OP 2 scatter_add:  out[c with c[dim] = index[c]] += src[c] for c in index's shape (out already
//                      holds self); out, index, src strided; additions by compare-and-swap
//   b1 x or out (scatter), b2 index, b3 out (select, gather) or src (scatter), b4 the error slot (uint[8])
#extension GL_EXT_shader_explicit_arithmetic_types_int64 : require
layout(local_size_x_id = 0) in;
layout(constant_id = 1) const uint OP = 0;

layout(std430, set = 0, binding = 0) readonly buffer Params {
  uint off_x;
  uint off_i;
  uint off_o;
  uint off_e;
  uint n;        // elements to produce (select, gather) or to scatter
  uint ndim;     // of index (gather, scatter)
  uint dim;      // the indexed dim
  uint limit;    // x's (or out's) size along dim; index_select: n
  uint inner;    // index_select only
  uint k;        // index_select only
  uint report_dim;  // the user's dim, for the error message
  uint size[8];  // index's shape, innermost first
  int x_s[8];    // strides of x (gather) or out (scatter), innermost first
  int i_s[8];    // of index
  int s_s[8];    // of src (scatter)
}
p;
layout(std430, set = 0, binding = 1) buffer X { float x[]; };
layout(std430, set = 0, binding = 1) buffer XU { uint xu[]; };
layout(std430, set = 0, binding = 2) readonly buffer I { int64_t idx[]; };
layout(std430, set = 0, binding = 3) buffer O { float o[]; };
layout(std430, set = 0, binding = 4) buffer E { uint err[]; };

void record(int64_t value) {
  if (atomicCompSwap(err[p.off_e], 0u, 1u) != 0u) return;
  err[p.off_e + 1] = OP;
  err[p.off_e + 2] = uint(value);
  err[p.off_e + 3] = uint(value >> 32);
  err[p.off_e + 4] = p.limit;
  err[p.off_e + 5] = p.report_dim;
  memoryBarrierBuffer();
  atomicExchange(err[p.off_e], 2u);
}

void main() {
  const uint step = gl_NumWorkGroups.x * gl_WorkGroupSize.x;
  for (uint t = gl_GlobalInvocationID.x; t < p.n; t += step) {
    if (OP == 0u) {
      const uint i = t % p.inner, j = (t / p.inner) % p.k, outer = t / (p.inner * p.k);
      const int64_t v = idx[p.off_i + j];
      if (v < 0 || v >= int64_t(p.limit)) {
        record(v);
        o[p.off_o + t] = 0.0 / 0.0;
      } else {
        o[p.off_o + t] = x[p.off_x + (outer * p.limit + uint(v)) * p.inner + i];
      }
      continue;
    }
    // c: the coordinates of t in index's shape; offsets of x (or out), index and src at c.
    uint rem = t;
    int xo = 0, io = 0, so = 0;
    int xdim = 0;
    for (uint d = 0; d < p.ndim; ++d) {
      const uint c = rem % p.size[d];
      rem /= p.size[d];
      if (d == p.dim) xdim = p.x_s[d];
      else xo += int(c) * p.x_s[d];
      io += int(c) * p.i_s[d];
      so += int(c) * p.s_s[d];
    }
    const int64_t v = idx[int(p.off_i) + io];
    const bool ok = v >= 0 && v < int64_t(p.limit);
    if (!ok) record(v);
    if (OP == 1u) {
      o[p.off_o + t] = ok ? x[int(p.off_x) + xo + int(v) * xdim] : 0.0 / 0.0;
    } else if (ok) {
      const uint at = uint(int(p.off_x) + xo + int(v) * xdim);
      const float add = o[int(p.off_o) + so];
      uint seen = xu[at];
      for (;;) {
        const uint want = floatBitsToUint(uintBitsToFloat(seen) + add);
        const uint before = atomicCompSwap(xu[at], seen, want);
        if (before == seen) break;
        seen = before;
      }
    }
  }
}
