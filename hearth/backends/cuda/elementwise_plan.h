// How the CUDA elementwise engine walks its operands, decided on the host:
// dimensions ordered by the output's strides and merged where every operand is
// contiguous across them, 16-byte vectors where the innermost dimension allows,
// 32-bit offsets with multiply-shift division where every offset fits. Plain
// C++ (the device parts are host-callable too), so the host-side unit tests can
// walk a plan element by element and compare it with the plain strides.
#pragma once

#include <algorithm>
#include <array>
#include <cstdint>
#include <limits>
#include <vector>

#include "hearth/backends/cuda/fast_divmod.h"

// Device pass only: the host compiler would warn about an unknown pragma.
#if defined(__CUDA_ARCH__)
#define HEARTH_UNROLL _Pragma("unroll")
#else
#define HEARTH_UNROLL
#endif

namespace hearth::cuda {

inline constexpr int kMaxDims = 12;

// Operand layouts over one iteration space, innermost dimension first.
// Operand 0 is the output; strides are in bytes, 0 where broadcast.
template <int N>
struct IterDims {
  std::vector<int64_t> sizes;
  std::vector<std::array<int64_t, N>> strides;
  int ndim() const { return static_cast<int>(sizes.size()); }
  int64_t numel() const {
    int64_t n = 1;
    for (int64_t s : sizes) n *= s;
    return n;
  }
};

// `strides[k]` holds operand k's byte strides, one per dim of `shape` (outermost
// first), already 0 where the operand is broadcast. Drops size-1 dims, orders
// the rest by the output's strides (so a permuted or channels_last output is
// walked in its memory order), then merges neighbours contiguous in every
// operand. Always leaves at least one dimension.
template <int N>
IterDims<N> collapse_dims(const std::vector<int64_t>& shape, const std::array<std::vector<int64_t>, N>& strides) {
  std::vector<int> order;  // innermost first
  for (int d = static_cast<int>(shape.size()) - 1; d >= 0; --d)
    if (shape[d] != 1) order.push_back(d);
  const auto out_stride = [&](int d) { return strides[0][d] < 0 ? -strides[0][d] : strides[0][d]; };
  std::stable_sort(order.begin(), order.end(), [&](int a, int b) { return out_stride(a) < out_stride(b); });
  IterDims<N> dims;
  for (int d : order) {
    std::array<int64_t, N> st;
    for (int k = 0; k < N; ++k) st[k] = strides[k][d];
    if (dims.ndim() > 0) {
      const int last = dims.ndim() - 1;
      bool merge = true;
      for (int k = 0; k < N && merge; ++k) merge = st[k] == dims.strides[last][k] * dims.sizes[last];
      if (merge) {
        dims.sizes[last] *= shape[d];
        continue;
      }
    }
    dims.sizes.push_back(shape[d]);
    dims.strides.push_back(st);
  }
  if (dims.sizes.empty()) {
    dims.sizes.push_back(1);
    dims.strides.push_back({});
  }
  return dims;
}

// True when every element index and every operand's byte offset fits a signed
// 32-bit integer (negative strides included), so the 32-bit calculator applies.
template <int N>
bool fits_int32(const IterDims<N>& dims) {
  constexpr int64_t kMax = std::numeric_limits<int32_t>::max();
  if (dims.numel() > kMax || dims.ndim() > kMaxDims) return false;
  for (int k = 0; k < N; ++k) {
    int64_t reach = 0;
    for (int d = 0; d < dims.ndim(); ++d) {
      const int64_t s = dims.strides[d][k] < 0 ? -dims.strides[d][k] : dims.strides[d][k];
      reach += (dims.sizes[d] - 1) * s;
      if (reach > kMax) return false;
    }
  }
  return true;
}

// Elements a thread handles at once: 16 bytes of the narrowest operand, at most 8.
constexpr int vector_width(int min_elem_size) { return std::min(8, std::max(1, 16 / min_elem_size)); }
// Bytes of one memory access of a `vec`-wide operand with `elem_size`-byte
// elements: 16 at most, so a wider operand takes several accesses.
constexpr int access_bytes(int elem_size, int vec) { return elem_size * std::min(vec, std::max(1, 16 / elem_size)); }

// The iteration space in units of `vec` elements: the innermost dimension is
// divided by `vec`; an operand with innermost stride 0 (broadcast along it) is
// read once and repeated (its bit in broadcast_mask). Only a single remaining
// dimension may leave a tail, handled element by element.
template <int N>
struct VectorPlan {
  IterDims<N> dims;
  uint32_t broadcast_mask = 0;
  int64_t tail = 0;                      // elements after the last full vector
  std::array<int64_t, N> tail_strides{};  // byte stride per element of the tail
};

// Whether `dims` can be walked in vectors of `vec` elements: the innermost
// dimension dense (stride = element size) or broadcast in every operand, and
// every dense operand's address and outer strides aligned to its access size.
template <int N>
bool plan_vectors(const IterDims<N>& dims, int vec, const std::array<int, N>& elem_size,
                  const std::array<uintptr_t, N>& address, VectorPlan<N>& plan) {
  if (vec <= 1) return false;
  const int64_t inner = dims.sizes[0];
  if (dims.ndim() > 1 ? inner % vec != 0 : inner < vec) return false;
  uint32_t mask = 0;
  for (int k = 0; k < N; ++k) {
    const int64_t s0 = dims.strides[0][k];
    if (s0 == 0) {
      mask |= 1u << k;
      continue;
    }
    if (s0 != elem_size[k]) return false;
    const int64_t align = access_bytes(elem_size[k], vec);
    if (address[k] % align != 0) return false;
    for (int d = 1; d < dims.ndim(); ++d)
      if (dims.strides[d][k] % align != 0) return false;
  }
  if (mask & 1u) return false;  // the output is never broadcast; a size-1 space is not worth vectors
  plan.dims = dims;
  plan.dims.sizes[0] = inner / vec;
  for (int k = 0; k < N; ++k) plan.dims.strides[0][k] = dims.strides[0][k] * vec;
  plan.broadcast_mask = mask;
  plan.tail = inner % vec;
  for (int k = 0; k < N; ++k) plan.tail_strides[k] = dims.strides[0][k];
  return true;
}

// Linear index -> byte offset of every operand, in 32-bit arithmetic: one
// multiply-shift division per dimension but the outermost.
template <int N>
struct OffsetCalc32 {
  int ndim = 1;
  FastDivmod div[kMaxDims];        // innermost first
  int32_t strides[kMaxDims][N]{};  // bytes

  HEARTH_HOST_DEVICE void get(uint32_t linear, int32_t (&off)[N]) const {
    HEARTH_UNROLL
    for (int k = 0; k < N; ++k) off[k] = 0;
    HEARTH_UNROLL
    for (int d = 0; d < kMaxDims; ++d) {
      if (d == ndim - 1) {  // the outermost: what is left of the index is its coordinate
        HEARTH_UNROLL
        for (int k = 0; k < N; ++k) off[k] += static_cast<int32_t>(linear) * strides[d][k];
        break;
      }
      uint32_t q, r;
      div[d].divmod(linear, q, r);
      HEARTH_UNROLL
      for (int k = 0; k < N; ++k) off[k] += static_cast<int32_t>(r) * strides[d][k];
      linear = q;
    }
  }
};

// Requires fits_int32(dims).
template <int N>
OffsetCalc32<N> make_offset_calc32(const IterDims<N>& dims) {
  OffsetCalc32<N> oc;
  oc.ndim = dims.ndim();
  for (int d = 0; d < dims.ndim(); ++d) {
    oc.div[d] = FastDivmod(static_cast<uint32_t>(dims.sizes[d]));
    for (int k = 0; k < N; ++k) oc.strides[d][k] = static_cast<int32_t>(dims.strides[d][k]);
  }
  return oc;
}

// A copy whose innermost destination dimension is strided in the source, while
// another dimension is dense in the source: a batch of 2-D transposes, done
// through shared-memory tiles so both sides are read and written in full lines.
struct TransposePlan {
  int64_t rows = 0;            // along the source's dense dimension (strided in the destination)
  int64_t cols = 0;            // along the destination's dense dimension (strided in the source)
  int64_t src_col_stride = 0;  // bytes
  int64_t dst_row_stride = 0;  // bytes
  IterDims<2> batch;           // the other dimensions; operand 0 the destination, 1 the source
};

// `dims` as collapse_dims<2> leaves them for (destination, source); both
// operands `elem_size` bytes. Worth it only when both tile sides are well filled.
inline bool plan_transpose(const IterDims<2>& dims, int64_t elem_size, TransposePlan& plan) {
  constexpr int64_t kMinSide = 16;
  if (dims.ndim() < 2 || dims.strides[0][0] != elem_size || dims.strides[0][1] == elem_size) return false;
  int dense = -1;
  for (int d = 1; d < dims.ndim(); ++d)
    if (dims.strides[d][1] == elem_size) dense = d;
  if (dense < 0 || dims.sizes[0] < kMinSide || dims.sizes[dense] < kMinSide) return false;
  plan.cols = dims.sizes[0];
  plan.src_col_stride = dims.strides[0][1];
  plan.rows = dims.sizes[dense];
  plan.dst_row_stride = dims.strides[dense][0];
  plan.batch = IterDims<2>{};
  for (int d = 1; d < dims.ndim(); ++d) {
    if (d == dense) continue;
    plan.batch.sizes.push_back(dims.sizes[d]);
    plan.batch.strides.push_back(dims.strides[d]);
  }
  if (plan.batch.sizes.empty()) {
    plan.batch.sizes.push_back(1);
    plan.batch.strides.push_back({});
  }
  return true;
}

}  // namespace hearth::cuda
