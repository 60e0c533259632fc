#version 450
// Batched GEMM, out[b] = a[b] @ b[b] (+ bias[n]) (+ partial[b]), accumulated
// in float32. a and b are read through their strides (row- or column-major,
// batch stride 0 for a broadcast operand); out and partial are dense [B, M, N].
// A workgroup of TS x TS invocations computes a (TS*MT) x (TS*MT) tile of out,
// each invocation MT x MT of it, through TS-deep slices of a and b staged in
// shared memory. TS is specialisation constant 1 (the host picks it from
// the device's workgroup limits); the workgroup size (constant 0) is TS * TS.
// Each operand's dtype is a specialisation constant (DT_0 .. DT_4: a, b, out,
// bias, partial): float32 in the plain variant, float32, float16 or bfloat16
// in gemm_half (HAS_FLOAT16; products of 16-bit operands accumulate in
// float32 and are rounded once, as the CPU's).
#include "elementwise_ops.h"
#define V float
layout(local_size_x_id = 0) in;
layout(constant_id = 1) const uint TS = 16;
layout(constant_id = 2) const uint DT_0 = DT_FLOAT32;
layout(constant_id = 3) const uint DT_1 = DT_FLOAT32;
layout(constant_id = 4) const uint DT_2 = DT_FLOAT32;
layout(constant_id = 5) const uint DT_3 = DT_FLOAT32;
layout(constant_id = 6) const uint DT_4 = DT_FLOAT32;
#include "dtype_access.glsl"
#define MT 4
#define BM (TS * MT)
#define BK TS

layout(std430, set = 0, binding = 0) readonly buffer Params {
  uint off_a;
  uint off_b;
  uint off_out;
  uint off_bias;
  uint off_partial;
  uint M;
  uint N;
  uint K;
  int a_batch;
  int a_row;
  int a_col;
  int b_batch;
  int b_row;
  int b_col;
  uint has_bias;
  uint has_partial;
}
p;
DECLARE_TENSOR(0, 1)  // a
DECLARE_TENSOR(1, 2)  // b
DECLARE_TENSOR(2, 3)  // out
DECLARE_TENSOR(3, 4)  // bias
DECLARE_TENSOR(4, 5)  // partial

shared float As[BK * BM];  // [k][m]
shared float Bs[BK * BM];  // [k][n]

void main() {
  const uint tid = gl_LocalInvocationID.x;
  const uint tx = tid % TS, ty = tid / TS;
  const uint batch = gl_WorkGroupID.z;
  const uint m0 = gl_WorkGroupID.y * BM, n0 = gl_WorkGroupID.x * BM;
  const int a_base = int(p.off_a) + int(batch) * p.a_batch;
  const int b_base = int(p.off_b) + int(batch) * p.b_batch;

  float acc[MT][MT];
  for (uint i = 0; i < MT; ++i)
    for (uint j = 0; j < MT; ++j) acc[i][j] = 0.0;

  for (uint k0 = 0; k0 < p.K; k0 += BK) {
    // Stage a[m0 .. m0+BM, k0 .. k0+BK) and b[k0 .. k0+BK, n0 .. n0+BM), zero outside.
    for (uint e = tid; e < BK * BM; e += TS * TS) {
      const uint mm = e / BK, kk = e % BK;
      const uint m = m0 + mm, k = k0 + kk;
      As[kk * BM + mm] = (m < p.M && k < p.K) ? load_0(uint(a_base + int(m) * p.a_row + int(k) * p.a_col)) : 0.0;
      const uint kb = e / BM, nn = e % BM;
      const uint n = n0 + nn, k2 = k0 + kb;
      Bs[kb * BM + nn] = (n < p.N && k2 < p.K) ? load_1(uint(b_base + int(k2) * p.b_row + int(n) * p.b_col)) : 0.0;
    }
    barrier();
    for (uint kk = 0; kk < BK; ++kk) {
      float av[MT], bv[MT];
      for (uint i = 0; i < MT; ++i) av[i] = As[kk * BM + ty + i * TS];
      for (uint j = 0; j < MT; ++j) bv[j] = Bs[kk * BM + tx + j * TS];
      for (uint i = 0; i < MT; ++i)
        for (uint j = 0; j < MT; ++j) acc[i][j] += av[i] * bv[j];
    }
    barrier();
  }

  for (uint i = 0; i < MT; ++i) {
    const uint m = m0 + ty + i * TS;
    if (m >= p.M) continue;
    for (uint j = 0; j < MT; ++j) {
      const uint n = n0 + tx + j * TS;
      if (n >= p.N) continue;
      const uint at = (batch * p.M + m) * p.N + n;
      float v = acc[i][j];
      if (p.has_bias != 0u) v += load_3(p.off_bias + n);
      if (p.has_partial != 0u) v += load_4(p.off_partial + at);
      store_2(p.off_out + at, v);
    }
  }
}
