// cumsum on CUDA over x [outer, n, inner] (contract in
// hearth/dispatch/schemas/scan.h), running sums in float (double for
// float64, int64 for integers).
//
// Along the last dim (inner == 1) a group of threads owns a row: each thread
// scans a 16-byte chunk of a tile in registers, the group scans the chunk
// totals with warp shuffles, and the tile's total carries into the next tile.
// Along another dim each thread walks one line (o, i) down n; neighbouring
// threads take neighbouring i, so loads stay coalesced.
//
// When rows or lines are too few to fill the GPU they are cut into segments:
// one pass sums each segment, a second turns those sums into each segment's
// starting offset, a third scans the segments from their offsets. Every sum is
// taken in an order fixed by the shape, so results are reproducible.
#include <algorithm>

#include "hearth/backends/cuda/row_reduce.cuh"
#include "hearth/dispatch/registry.h"
#include "hearth/dispatch/schemas/scan.h"

namespace hearth::cuda {
namespace {

using rowred::Pack;
using rowred::pow2_at_least;

DeviceKind cuda_kind() { return register_device_kind("cuda"); }

constexpr int kMaxGroup = 512;

// Element `p` of a scan in order: the p-th from the end when scanning in reverse.
__device__ __forceinline__ int64_t physical(int64_t p, int64_t n, bool reverse) { return reverse ? n - 1 - p : p; }

// Loads the VEC elements at scan positions [p, p + VEC) of a row of n, zero past `end`.
template <typename D, int VEC, bool kRev>
__device__ __forceinline__ void load_chunk(const D* row, int64_t n, int64_t p, int64_t end, acc_t<D> (&v)[VEC]) {
  if constexpr (VEC > 1) {  // n and p are multiples of VEC, the row is 16-byte aligned
    if (p >= end) {
#pragma unroll
      for (int e = 0; e < VEC; ++e) v[e] = 0;
      return;
    }
    const int64_t first = kRev ? n - p - VEC : p;
    const Pack<D, VEC> pk = reinterpret_cast<const Pack<D, VEC>*>(row)[first / VEC];
#pragma unroll
    for (int e = 0; e < VEC; ++e) v[e] = to_acc(pk.v[kRev ? VEC - 1 - e : e]);
  } else {
    v[0] = p < end ? to_acc(row[physical(p, n, kRev)]) : acc_t<D>(0);
  }
}

template <typename D, int VEC, bool kRev>
__device__ __forceinline__ void store_chunk(D* row, int64_t n, int64_t p, int64_t end, const acc_t<D> (&v)[VEC]) {
  if (p >= end) return;
  if constexpr (VEC > 1) {
    Pack<D, VEC> pk;
#pragma unroll
    for (int e = 0; e < VEC; ++e) pk.v[kRev ? VEC - 1 - e : e] = from_acc<D>(v[e]);
    reinterpret_cast<Pack<D, VEC>*>(row)[(kRev ? n - p - VEC : p) / VEC] = pk;
  } else {
    row[physical(p, n, kRev)] = from_acc<D>(v[0]);
  }
}

// Exclusive prefix of `x` over the group's threads and the group's total.
// Groups wider than a warp are whole warps; every thread of the block calls it
// equally often. `smem` holds one value per warp of the block.
template <typename A>
__device__ __forceinline__ A group_exclusive_scan(A x, int tpr, A* smem, A& total) {
  const int width = tpr < 32 ? tpr : 32;
  const int lane = threadIdx.x % width;
  A inc = x;
  for (int o = 1; o < width; o *= 2) {
    const A up = __shfl_up_sync(0xffffffffu, inc, o, width);
    if (lane >= o) inc += up;
  }
  A ex = __shfl_up_sync(0xffffffffu, inc, 1, width);
  if (lane == 0) ex = 0;
  if (tpr <= 32) {
    total = __shfl_sync(0xffffffffu, inc, width - 1, width);
    return ex;
  }
  const int warp = threadIdx.x / 32, warps = tpr / 32, first = warp - (threadIdx.x % tpr) / 32;
  __syncthreads();  // the previous tile's readers are done with smem
  if (lane == 31) smem[warp] = inc;
  __syncthreads();
  A before = 0;
  total = 0;
  for (int w = first; w < first + warps; ++w) {
    const A t = smem[w];
    if (w < warp) before += t;
    total += t;
  }
  return before + ex;
}

// Scans item (row, segment) of rows of n, tile by tile, starting from
// offsets[item] (or 0); with kTotals it only writes the segment's sum to
// offsets[item] instead.
template <typename D, int VEC, bool kRev, bool kTotals>
__global__ void __launch_bounds__(kMaxGroup)
    scan_rows_kernel(const D* __restrict__ x, D* __restrict__ y, int64_t outer, int64_t n, int64_t seg_len,
                     int64_t segs, acc_t<D>* __restrict__ offsets, int tpr) {
  using A = acc_t<D>;
  __shared__ A smem[32];
  const int groups = blockDim.x / tpr;
  const int g = threadIdx.x / tpr, t = threadIdx.x % tpr;
  const int64_t items = outer * segs, tile = static_cast<int64_t>(tpr) * VEC;
  const int64_t span = seg_len < n ? seg_len : n;  // the same for every group, so loops stay uniform
  for (int64_t base = static_cast<int64_t>(blockIdx.x) * groups; base < items;
       base += static_cast<int64_t>(gridDim.x) * groups) {
    const int64_t item = base + g;
    const bool active = item < items;
    const int64_t row = active ? item / segs : 0, seg = active ? item % segs : 0;
    const int64_t begin = seg * seg_len;
    const int64_t end = active ? (begin + seg_len < n ? begin + seg_len : n) : 0;
    const D* xr = x + row * n;
    A carry = (!kTotals && segs > 1 && active) ? offsets[item] : A(0);
    for (int64_t tb = 0; tb < span; tb += tile) {
      const int64_t p = begin + tb + static_cast<int64_t>(t) * VEC;
      A v[VEC];
      load_chunk<D, VEC, kRev>(xr, n, p, end, v);
#pragma unroll
      for (int e = 1; e < VEC; ++e) v[e] += v[e - 1];
      A tile_total;
      const A ex = group_exclusive_scan(v[VEC - 1], tpr, smem, tile_total);
      if constexpr (!kTotals) {
#pragma unroll
        for (int e = 0; e < VEC; ++e) v[e] += carry + ex;
        store_chunk<D, VEC, kRev>(y + row * n, n, p, end, v);
      }
      carry += tile_total;
    }
    if (kTotals && active && t == 0) offsets[item] = carry;
  }
}

// In place: each row of sums [outer, segs] becomes its exclusive prefix sums.
// A warp per row.
template <typename A>
__global__ void exclusive_scan_sums_kernel(A* __restrict__ sums, int64_t outer, int64_t segs) {
  const int lane = threadIdx.x % 32;
  const int64_t first = (static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x) / 32;
  const int64_t warps = static_cast<int64_t>(gridDim.x) * blockDim.x / 32;
  for (int64_t row = first; row < outer; row += warps) {  // uniform within a warp
    A carry = 0;
    for (int64_t k0 = 0; k0 < segs; k0 += 32) {
      const int64_t k = k0 + lane;
      const A x = k < segs ? sums[row * segs + k] : A(0);
      A inc = x;
      for (int o = 1; o < 32; o *= 2) {
        const A up = __shfl_up_sync(0xffffffffu, inc, o);
        if (lane >= o) inc += up;
      }
      A ex = __shfl_up_sync(0xffffffffu, inc, 1);
      if (lane == 0) ex = 0;
      if (k < segs) sums[row * segs + k] = carry + ex;
      carry += __shfl_sync(0xffffffffu, inc, 31);
    }
  }
}

// Lines along the middle dim: thread per (o, seg, i). kTotals writes the
// segment's sum to offsets[(o * segs + seg) * inner + i]; otherwise the scan
// starts from that offset (when segs > 1) and writes y.
template <typename D, bool kRev, bool kTotals>
__global__ void scan_lines_kernel(const D* __restrict__ x, D* __restrict__ y, int64_t outer, int64_t n, int64_t inner,
                                  int64_t seg_len, int64_t segs, acc_t<D>* __restrict__ offsets) {
  using A = acc_t<D>;
  const int64_t total = outer * segs * inner;
  for (int64_t k = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; k < total;
       k += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    const int64_t i = k % inner, os = k / inner, seg = os % segs, o = os / segs;
    const int64_t begin = seg * seg_len, end = begin + seg_len < n ? begin + seg_len : n;
    const int64_t line = o * n * inner + i;
    A run = (!kTotals && segs > 1) ? offsets[k] : A(0);
    int64_t p = begin;
    for (; p + 3 < end; p += 4) {  // four loads in flight before the dependent adds
      A v[4];
#pragma unroll
      for (int u = 0; u < 4; ++u) v[u] = to_acc(x[line + physical(p + u, n, kRev) * inner]);
#pragma unroll
      for (int u = 0; u < 4; ++u) {
        run += v[u];
        if constexpr (!kTotals) y[line + physical(p + u, n, kRev) * inner] = from_acc<D>(run);
      }
    }
    for (; p < end; ++p) {
      run += to_acc(x[line + physical(p, n, kRev) * inner]);
      if constexpr (!kTotals) y[line + physical(p, n, kRev) * inner] = from_acc<D>(run);
    }
    if constexpr (kTotals) offsets[k] = run;
  }
}

// In place: sums [outer, segs, inner] become exclusive prefix sums along segs.
template <typename A>
__global__ void exclusive_scan_line_sums_kernel(A* __restrict__ sums, int64_t outer, int64_t segs, int64_t inner) {
  for (int64_t k = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; k < outer * inner;
       k += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    const int64_t o = k / inner, i = k % inner;
    A run = 0;
    for (int64_t s = 0; s < segs; ++s) {
      A& cell = sums[(o * segs + s) * inner + i];
      const A v = cell;
      cell = run;
      run += v;
    }
  }
}

int64_t resident_threads(int device) { return static_cast<int64_t>(context(device).props.multiProcessorCount) * 2048; }

template <typename D, bool kRev>
void scan_rows(const D* xp, D* yp, int64_t outer, int64_t n, int device, cudaStream_t s, const Tensor& like) {
  using A = acc_t<D>;
  constexpr int kVec = sizeof(D) < 16 ? static_cast<int>(16 / sizeof(D)) : 1;
  const bool vec = kVec > 1 && n % kVec == 0 && reinterpret_cast<uintptr_t>(xp) % 16 == 0 &&
                   reinterpret_cast<uintptr_t>(yp) % 16 == 0;
  const int64_t v = vec ? kVec : 1;
  const int64_t chunks = (n + v - 1) / v;
  int tpr = static_cast<int>(std::min<int64_t>(kMaxGroup, pow2_at_least(chunks)));
  const int64_t want = resident_threads(device);
  // Rows too few for the GPU: cut them into segments of whole tiles.
  int64_t segs = 1, seg_len = n;
  if (tpr == kMaxGroup && outer * kMaxGroup < want) {
    const int64_t tile = static_cast<int64_t>(kMaxGroup) * v;
    const int64_t tiles = (n + tile - 1) / tile;
    const int64_t want_segs = std::min<int64_t>((want + outer * kMaxGroup - 1) / (outer * kMaxGroup), tiles);
    if (want_segs > 1) {
      seg_len = ((tiles + want_segs - 1) / want_segs) * tile;
      segs = (n + seg_len - 1) / seg_len;
    }
  }
  const int threads = std::max(tpr, 256);
  const unsigned blocks = rowred::grid_blocks(outer * segs, threads / tpr, device);
  Tensor scratch;
  A* offsets = nullptr;
  if (segs > 1) {
    scratch = Tensor::empty({outer * segs * static_cast<int64_t>(sizeof(A))}, DType::uint8, like.device());
    offsets = static_cast<A*>(scratch.data_ptr());
  }
  auto launch = [&](auto vec_tag, auto totals_tag) {
    constexpr int V = decltype(vec_tag)::value;
    constexpr bool T = decltype(totals_tag)::value;
    scan_rows_kernel<D, V, kRev, T><<<blocks, threads, 0, s>>>(xp, yp, outer, n, seg_len, segs, offsets, tpr);
    HEARTH_CUDA_CHECK_LAUNCH();
  };
  using V1 = std::integral_constant<int, 1>;
  using VN = std::integral_constant<int, kVec>;
  if (segs > 1) {
    if (vec)
      launch(VN{}, std::true_type{});
    else
      launch(V1{}, std::true_type{});
    exclusive_scan_sums_kernel<A><<<rowred::grid_blocks(outer, 256 / 32, device), 256, 0, s>>>(offsets, outer, segs);
    HEARTH_CUDA_CHECK_LAUNCH();
  }
  if (vec)
    launch(VN{}, std::false_type{});
  else
    launch(V1{}, std::false_type{});
}

template <typename D, bool kRev>
void scan_lines(const D* xp, D* yp, int64_t outer, int64_t n, int64_t inner, int device, cudaStream_t s,
                const Tensor& like) {
  using A = acc_t<D>;
  const int64_t lines = outer * inner, want = resident_threads(device);
  int64_t segs = 1, seg_len = n;
  if (lines < want) {  // each segment keeps at least 32 steps; at most 1024 segments to combine
    const int64_t want_segs = std::min<int64_t>({(want + lines - 1) / lines, n / 32, 1024});
    if (want_segs > 1) {
      seg_len = (n + want_segs - 1) / want_segs;
      segs = (n + seg_len - 1) / seg_len;
    }
  }
  const unsigned blocks = rowred::grid_blocks(lines * segs, 256, device);
  if (segs == 1) {
    scan_lines_kernel<D, kRev, false><<<blocks, 256, 0, s>>>(xp, yp, outer, n, inner, seg_len, segs, nullptr);
    HEARTH_CUDA_CHECK_LAUNCH();
    return;
  }
  Tensor scratch = Tensor::empty({lines * segs * static_cast<int64_t>(sizeof(A))}, DType::uint8, like.device());
  A* offsets = static_cast<A*>(scratch.data_ptr());
  scan_lines_kernel<D, kRev, true><<<blocks, 256, 0, s>>>(xp, yp, outer, n, inner, seg_len, segs, offsets);
  HEARTH_CUDA_CHECK_LAUNCH();
  exclusive_scan_line_sums_kernel<A>
      <<<rowred::grid_blocks(lines, 256, device), 256, 0, s>>>(offsets, outer, segs, inner);
  HEARTH_CUDA_CHECK_LAUNCH();
  scan_lines_kernel<D, kRev, false><<<blocks, 256, 0, s>>>(xp, yp, outer, n, inner, seg_len, segs, offsets);
  HEARTH_CUDA_CHECK_LAUNCH();
}

template <typename D>
void cumsum_typed(const Tensor& x, const Tensor& out, bool reverse) {
  const int64_t outer = x.shape()[0], n = x.shape()[1], inner = x.shape()[2];
  if (x.numel() == 0) return;
  const int device = x.device().index;
  const cudaStream_t s = stream(device);
  const D* xp = static_cast<const D*>(x.data_ptr());
  D* yp = static_cast<D*>(out.data_ptr());
  if (inner == 1) {
    if (reverse)
      scan_rows<D, true>(xp, yp, outer, n, device, s, x);
    else
      scan_rows<D, false>(xp, yp, outer, n, device, s, x);
  } else {
    if (reverse)
      scan_lines<D, true>(xp, yp, outer, n, inner, device, s, x);
    else
      scan_lines<D, false>(xp, yp, outer, n, inner, device, s, x);
  }
}

void cumsum_kernel(OpCall& call) {
  const Tensor& x = call.in(0);
  activate(x.device().index);
  const bool reverse = call.attrs<ScanAttrs>().reverse;
  HEARTH_CUDA_DISPATCH_IN((DTypeSet::floating() | DTypeSet{DType::int64}), x.dtype(), "cumsum",
                          [&] { cumsum_typed<scalar_t>(x, call.out(0), reverse); });
}

HEARTH_REGISTER_KERNEL(cumsum, cuda_kind(), cumsum_kernel, DTypeSet::floating() | DTypeSet{DType::int64});

}  // namespace
}  // namespace hearth::cuda
