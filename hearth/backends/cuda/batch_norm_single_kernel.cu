// Batch norm forward (training, with the fused ReLU and residual) and backward
// as ONE cooperative kernel each, for channels-fastest inputs ([N, C], NHWC
// images as [N*H*W, C]) small enough to stay in L2.
//
// The three-kernel path (batch_norm.cu: partial sums, per-channel finalize,
// apply) runs at 2.8-3 TB/s on large tensors, but on the small ones of a
// ResNet-50 step its kernel boundaries and tails cost more than the bytes
// (a [6272, 512] bf16 forward took 0.037 ms for 0.006 ms of traffic). Here a
// grid no larger than can be co-resident (cudaOccupancyMaxActiveBlocksPerMultiprocessor
// x SMs, at most kBlocksPerSm per SM) runs:
//   1. the partial sums of each block's rows for its channels, exactly as
//      row_partials_kernel does (the same row_partials_block: shifted sums of
//      x forward, sums of g and g (x - mean) backward with the ReLU mask and
//      the residual gradient's write), into partials [2][splits][C];
//   2. a grid-wide sync;
//   3. the merge: warp w of the grid takes channels w, w + warps, ...; its
//      lane l adds splits l, l + 32, ... in double, in order, and a butterfly
//      of shuffles adds the lanes (PartialSums::warp_sum), so the result
//      depends on the shape and the device alone, never on timing. Lane 0
//      turns the sums into the channel's outputs with the three-kernel path's
//      own maths (finalize_channel: mean, invstd, running statistics, affine
//      map; grad_finalize_channel: grad_weight, grad_bias, backward's map);
//      block 0 counts the batch (num_batches_tracked);
//   4. a second grid-wide sync, after which every thread loads the maps of
//      its channels and applies them to the rows it summed in step 1: they
//      were just read by this SM, so they come back from L1 or L2, not DRAM.
// The merge order differs from the finalize kernels' (warps rather than
// blocks of 16 lanes), so the two paths may differ in the last bit of a
// statistic; each is deterministic.
//
// The size rule (single_kernel_takes): the bytes step 1 touches (x forward;
// grad_y, x, the saved output and the residual gradient backward, as the call
// has them) must be at most 5/8 of the device's L2, so that step 4 re-reads
// them from L2; beyond that a second read from DRAM costs what the three
// kernels cost. Training forward only (eval is a single apply kernel anyway),
// backward only in training with grad_x wanted; 16-byte vectors of channels
// (C a multiple of 16 bytes, every pointer 16-byte aligned), float32,
// bfloat16 and float16; devices with cooperative launch. Everything else, and
// everything after set_batch_norm_single_kernel_enabled(false), takes the three kernels.
//
// Scratch (partials, the maps) comes from the caching allocator and the
// launch is a plain stream operation, so the path can be captured into a step
// graph.
#include "hearth/backends/cuda/batch_norm_single_kernel.h"

#include <cooperative_groups.h>

#include <atomic>
#include <map>
#include <mutex>
#include <optional>
#include <utility>

#include "hearth/backends/cuda/batch_norm_maps.cuh"
#include "hearth/backends/cuda/batch_norm_partials.cuh"
#include "hearth/backends/cuda/nn_util.cuh"
#include "hearth/dispatch/schemas/batch_norm.h"

namespace hearth::cuda {
namespace {

namespace cg = cooperative_groups;
using namespace nn;
using namespace batch_norm_detail;

std::atomic<bool>& enabled_flag() {
  // On: the other path stays as the reference tests compare this one with.
  static std::atomic<bool> on{true};
  return on;
}

std::atomic<uint64_t> g_launches{0};

// Blocks per SM the grid aims at (as the partial-sum kernel): enough loads in
// flight, and no more splits than needed, each of which the merge adds.
constexpr int kBlocksPerSm = 4;

// The size rule (see the header comment): the bytes the first phase touches
// fit in 5/8 of L2, and the device launches cooperative kernels.
bool single_kernel_takes(int64_t touched_bytes, int device) {
  const cudaDeviceProp& props = context(device).props;  // queried from the device at first use
  if (!props.cooperativeLaunch) return false;
  return touched_bytes <= static_cast<int64_t>(props.l2CacheSize) / 8 * 5;
}

// Calls f(c, lane) on one whole warp of the grid for each channel c: warp w
// of the grid takes channels w, w + warps, ...; threads past a block's last
// whole warp take none.
template <typename F>
__device__ __forceinline__ void each_channel_by_warp(int64_t C, F&& f) {
  const int tid = threadIdx.y * blockDim.x + threadIdx.x, warps = blockDim.x * blockDim.y / 32;
  if (tid / 32 >= warps) return;
  const int64_t block = static_cast<int64_t>(blockIdx.y) * gridDim.x + blockIdx.x;
  const int64_t total = static_cast<int64_t>(gridDim.x) * gridDim.y * warps;
  for (int64_t c = block * warps + tid / 32; c < C; c += total) f(c, tid % 32);
}

// This thread's rows of its block's split [r0, r1), every blockDim.y-th from
// r0 + threadIdx.y (the rows row_partials_block summed), four in flight:
// out[r] = f(v) at channels c0.., v[n] being input n's pack of row r.
template <typename D, int VEC, int N, typename F>
__device__ __forceinline__ void map_split_rows(const D* const (&in)[N], D* __restrict__ out, int64_t r0, int64_t r1,
                                               int64_t C, int64_t c0, F&& f) {
  using P = Pack<D, VEC>;
  constexpr int kInFlight = 4;
  const int64_t step = blockDim.y;
  int64_t r = r0 + threadIdx.y;
  for (; r + (kInFlight - 1) * step < r1; r += kInFlight * step) {
    P v[kInFlight][N];
#pragma unroll
    for (int u = 0; u < kInFlight; ++u)
#pragma unroll
      for (int n = 0; n < N; ++n) v[u][n] = *reinterpret_cast<const P*>(in[n] + (r + u * step) * C + c0);
#pragma unroll
    for (int u = 0; u < kInFlight; ++u) *reinterpret_cast<P*>(out + (r + u * step) * C + c0) = f(v[u]);
  }
  for (; r < r1; r += step) {
    P v[N];
#pragma unroll
    for (int n = 0; n < N; ++n) v[n] = *reinterpret_cast<const P*>(in[n] + r * C + c0);
    *reinterpret_cast<P*>(out + r * C + c0) = f(v);
  }
}

template <typename D>
struct ForwardArgs {
  const D* x;
  const D* res;  // the residual, or null
  D* y;
  int64_t R, C;
  BnFinalizeArgs fin;
  Param<D> rm, rv, w, b;
  acc_t<D>* mean;
  acc_t<D>* invstd;
  acc_t<D>* affine;  // [2][C]
  int64_t* num_batches_tracked;
  acc_t<D>* partials;  // [2][gridDim.y][C]
  bool relu;
};

// Grid (channel tiles, splits) of blocks tiled as row_partials_kernel's.
template <typename D, int VEC, bool kResidual>
__global__ void __launch_bounds__(256) batch_norm_single_kernel(ForwardArgs<D> a) {
  using A = acc_t<D>;
  using P = Pack<D, VEC>;
  __shared__ A smem[256];
  const int64_t splits = gridDim.y, split = blockIdx.y;
  row_partials_block<D, VEC, StatsTerms<D>, MaskKind::none>(a.x, nullptr, ReluMask<D>{}, nullptr, a.R, a.C,
                                                            StatsTerms<D>{a.x, 1}, a.partials, split, splits,
                                                            blockIdx.x, smem);
  cg::this_grid().sync();
  const PartialSums<A> sums{a.partials, a.C, splits, true};
  each_channel_by_warp(a.C, [&](int64_t c, int lane) {
    double s0, s1;
    sums.warp_sum(c, lane, s0, s1);
    if (lane == 0) finalize_channel<D>(c, s0, s1, a.x, a.fin, a.rm, a.rv, a.w, a.b, a.mean, a.invstd, a.affine);
  });
  if (a.num_batches_tracked && blockIdx.x == 0 && blockIdx.y == 0 && threadIdx.x == 0 && threadIdx.y == 0)
    ++*a.num_batches_tracked;
  cg::this_grid().sync();
  const int64_t c0 = (static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x) * VEC;
  if (c0 >= a.C) return;
  const AffinePack<D, VEC> map(a.affine, a.C, c0);
  const int64_t r0 = a.R * split / splits, r1 = a.R * (split + 1) / splits;
  if constexpr (kResidual) {
    const D* in[2] = {a.x, a.res};
    map_split_rows<D, VEC, 2>(in, a.y, r0, r1, a.C, c0,
                              [&](const P(&v)[2]) { return map.template apply<true>(v[0], v[1], a.relu); });
  } else {
    const D* in[1] = {a.x};
    map_split_rows<D, VEC, 1>(in, a.y, r0, r1, a.C, c0,
                              [&](const P(&v)[1]) { return map.template apply<false>(v[0], v[0], a.relu); });
  }
}

template <typename D>
struct BackwardArgs {
  const D* g;
  const D* x;
  ReluMask<D> mask;
  D* gr;  // the residual's gradient (the masked grad_y), or null
  D* gx;
  int64_t R, C;
  double count;
  const acc_t<D>* mean;
  const acc_t<D>* invstd;
  Param<D> w, gw, gb;
  acc_t<D>* coef;      // [4][C]
  acc_t<D>* partials;  // [2][gridDim.y][C]
};

template <typename D, int VEC, MaskKind M>
__global__ void __launch_bounds__(256) batch_norm_backward_single_kernel(BackwardArgs<D> a) {
  using A = acc_t<D>;
  using P = Pack<D, VEC>;
  __shared__ A smem[256];
  const int64_t splits = gridDim.y, split = blockIdx.y;
  row_partials_block<D, VEC, GradTerms<D>, M>(a.g, a.x, a.mask, a.gr, a.R, a.C, GradTerms<D>{a.mean}, a.partials,
                                              split, splits, blockIdx.x, smem);
  cg::this_grid().sync();
  const PartialSums<A> sums{a.partials, a.C, splits, true};
  each_channel_by_warp(a.C, [&](int64_t c, int lane) {
    double sg, sgx;
    sums.warp_sum(c, lane, sg, sgx);
    if (lane == 0)
      grad_finalize_channel<D>(c, sg, sgx, a.C, a.count, true, a.mean, a.invstd, a.w, a.gw, a.gb, a.coef);
  });
  cg::this_grid().sync();
  const int64_t c0 = (static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x) * VEC;
  if (c0 >= a.C) return;
  const int64_t r0 = a.R * split / splits, r1 = a.R * (split + 1) / splits;
  if (a.gr) {
    // grad_x from the masked gradient this thread just wrote: one read less.
    const GradPack<D, VEC, MaskKind::none> map(a.coef, ReluMask<D>{}, a.C, c0);
    const D* in[2] = {a.gr, a.x};
    map_split_rows<D, VEC, 2>(in, a.gx, r0, r1, a.C, c0,
                              [&](const P(&v)[2]) { return map.apply(v[0], v[1], v[0]); });
  } else if constexpr (M == MaskKind::saved) {
    const GradPack<D, VEC, M> map(a.coef, a.mask, a.C, c0);
    const D* in[3] = {a.g, a.x, a.mask.y};
    map_split_rows<D, VEC, 3>(in, a.gx, r0, r1, a.C, c0,
                              [&](const P(&v)[3]) { return map.apply(v[0], v[1], v[2]); });
  } else {
    const GradPack<D, VEC, M> map(a.coef, a.mask, a.C, c0);
    const D* in[2] = {a.g, a.x};
    map_split_rows<D, VEC, 2>(in, a.gx, r0, r1, a.C, c0,
                              [&](const P(&v)[2]) { return map.apply(v[0], v[1], v[0]); });
  }
}

// Blocks of `threads` threads of `kernel` that fit on one SM at once, cached
// per kernel, block size and device.
int resident_blocks(const void* kernel, int threads, int device) {
  static std::mutex mu;
  static std::map<std::pair<const void*, int>, int> cache;
  const std::pair<const void*, int> key{kernel, device * 4096 + threads};
  std::lock_guard<std::mutex> lock(mu);
  auto it = cache.find(key);
  if (it != cache.end()) return it->second;
  int blocks = 0;
  HEARTH_CUDA_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&blocks, kernel, threads, 0));
  cache.emplace(key, blocks);
  return blocks;
}

struct CoopGrid {
  dim3 grid, block;
  int64_t splits = 0;
};

// The grid of a single-kernel launch over R rows of C channels: tiled as the
// partial-sum kernel tiles them (plan_row_tiles), at most kBlocksPerSm blocks
// per SM and never more than can be resident at once (a grid-wide sync needs
// every block running); none when not even one channel tile fits.
std::optional<CoopGrid> cooperative_grid(const void* kernel, int64_t R, int64_t C, int vec, int device) {
  const dim3 block = plan_row_tiles(R, C, vec, device, 1).block;
  const int per_sm = resident_blocks(kernel, static_cast<int>(block.x * block.y), device);
  if (per_sm < 1) return std::nullopt;
  const RowTiles t = plan_row_tiles(R, C, vec, device, std::min(per_sm, kBlocksPerSm));
  const int64_t most = static_cast<int64_t>(per_sm) * sm_count(device);
  if (t.col_tiles > most) return std::nullopt;
  const int64_t splits = std::min<int64_t>(t.row_blocks, most / t.col_tiles);
  return CoopGrid{dim3(t.col_tiles, static_cast<unsigned>(splits)), t.block, splits};
}

template <typename Args>
void launch_cooperative(void (*kernel)(Args), const CoopGrid& g, cudaStream_t s, Args args) {
  cudaLaunchAttribute attr{};
  attr.id = cudaLaunchAttributeCooperative;
  attr.val.cooperative = 1;
  cudaLaunchConfig_t cfg{};
  cfg.gridDim = g.grid;
  cfg.blockDim = g.block;
  cfg.dynamicSmemBytes = 0;
  cfg.stream = s;
  cfg.attrs = &attr;
  cfg.numAttrs = 1;
  HEARTH_CUDA_CHECK(cudaLaunchKernelEx(&cfg, kernel, args));
  g_launches.fetch_add(1, std::memory_order_relaxed);
}

template <typename T>
struct TypeTag {
  using type = T;
};

// f(TypeTag<D>) for the dtypes the path takes; false for the others.
template <typename F>
bool with_path_dtype(DType t, F&& f) {
  switch (t) {
    case DType::float32: f(TypeTag<float>{}); return true;
    case DType::bfloat16: f(TypeTag<__nv_bfloat16>{}); return true;
    case DType::float16: f(TypeTag<__half>{}); return true;
    default: return false;
  }
}

}  // namespace

bool batch_norm_single_kernel_enabled() { return enabled_flag().load(std::memory_order_relaxed); }
void set_batch_norm_single_kernel_enabled(bool on) { enabled_flag().store(on); }
uint64_t batch_norm_single_kernel_launches() { return g_launches.load(); }

bool batch_norm_forward_single_kernel(OpCall& call) {
  const Tensor& x = call.in(0);
  const BatchNormAttrs& at = call.attrs<BatchNormAttrs>();
  if (!batch_norm_single_kernel_enabled() || !at.training) return false;
  const int64_t R = x.shape()[0], C = x.shape()[1], S = x.shape()[2];
  if (S != 1 || R < 1 || C < 1) return false;
  const Device dev = x.device();
  bool taken = false;
  with_path_dtype(x.dtype(), [&](auto tag) {
    using D = typename decltype(tag)::type;
    using A = acc_t<D>;
    constexpr int kVec = kVecOf<D>;
    const Tensor &y = call.out(0), &mean = call.out(1), &invstd = call.out(2);
    ForwardArgs<D> a{};
    a.x = static_cast<const D*>(x.data_ptr());
    a.res = call.in(5).defined() ? static_cast<const D*>(call.in(5).data_ptr()) : nullptr;
    a.y = static_cast<D*>(y.data_ptr());
    if (row_vector<D>(C, {a.x, a.res, a.y}) != kVec) return;
    if (!single_kernel_takes(R * C * static_cast<int64_t>(sizeof(D)), dev.index)) return;
    auto kernel = a.res ? batch_norm_single_kernel<D, kVec, true> : batch_norm_single_kernel<D, kVec, false>;
    const std::optional<CoopGrid> g = cooperative_grid(reinterpret_cast<const void*>(kernel), R, C, kVec, dev.index);
    if (!g) return;
    Tensor partials = Tensor::empty({2, g->splits, C}, mean.dtype(), dev);
    // The map goes to output 3 where it is wanted (backward's ReLU mask).
    Tensor affine = call.out(3).defined() ? call.out(3) : Tensor::empty({2, C}, mean.dtype(), dev);
    a.R = R;
    a.C = C;
    a.fin = BnFinalizeArgs{C, 1, static_cast<double>(R), at.momentum, at.eps, true};
    a.rm = param<D>(call.in(1));
    a.rv = param<D>(call.in(2));
    a.w = param<D>(call.in(3));
    a.b = param<D>(call.in(4));
    a.mean = static_cast<A*>(mean.data_ptr());
    a.invstd = static_cast<A*>(invstd.data_ptr());
    a.affine = static_cast<A*>(affine.data_ptr());
    a.num_batches_tracked = call.in(6).defined() ? static_cast<int64_t*>(call.in(6).data_ptr()) : nullptr;
    a.partials = static_cast<A*>(partials.data_ptr());
    a.relu = at.relu;
    launch_cooperative(kernel, *g, stream(dev.index), a);
    taken = true;
  });
  return taken;
}

bool batch_norm_backward_single_kernel(OpCall& call) {
  const Tensor &g = call.in(0), &x = call.in(1), &mean = call.in(2), &invstd = call.in(3);
  const Tensor &gx = call.out(0), &gw = call.out(1), &gb = call.out(2), &gr = call.out(3);
  const BatchNormAttrs& at = call.attrs<BatchNormAttrs>();
  if (!batch_norm_single_kernel_enabled() || !at.training || !gx.defined()) return false;
  const int64_t R = x.shape()[0], C = x.shape()[1], S = x.shape()[2];
  if (S != 1 || R < 1 || C < 1) return false;
  const Device dev = x.device();
  bool taken = false;
  with_path_dtype(x.dtype(), [&](auto tag) {
    using D = typename decltype(tag)::type;
    using A = acc_t<D>;
    constexpr int kVec = kVecOf<D>;
    BackwardArgs<D> a{};
    a.g = static_cast<const D*>(g.data_ptr());
    a.x = static_cast<const D*>(x.data_ptr());
    a.gr = gr.defined() ? static_cast<D*>(gr.data_ptr()) : nullptr;
    a.gx = static_cast<D*>(gx.data_ptr());
    const MaskKind kind = backward_relu_mask<D>(call, at.relu, a.gr != nullptr, a.mask);
    if (row_vector<D>(C, {a.g, a.x, a.mask.y, a.gr, a.gx}) != kVec) return;
    const int64_t tensors = 2 + (kind == MaskKind::saved ? 1 : 0) + (a.gr ? 1 : 0);
    if (!single_kernel_takes(tensors * R * C * static_cast<int64_t>(sizeof(D)), dev.index)) return;
    with_mask_kind(kind, [&](auto m) {
      auto kernel = batch_norm_backward_single_kernel<D, kVec, decltype(m)::value>;
      const std::optional<CoopGrid> grid =
          cooperative_grid(reinterpret_cast<const void*>(kernel), R, C, kVec, dev.index);
      if (!grid) return;
      Tensor partials = Tensor::empty({2, grid->splits, C}, mean.dtype(), dev);
      Tensor coef = Tensor::empty({4, C}, mean.dtype(), dev);
      a.R = R;
      a.C = C;
      a.count = static_cast<double>(R);
      a.mean = static_cast<const A*>(mean.data_ptr());
      a.invstd = static_cast<const A*>(invstd.data_ptr());
      a.w = param<D>(call.in(4));
      a.gw = param<D>(gw);
      a.gb = param<D>(gb);
      a.coef = static_cast<A*>(coef.data_ptr());
      a.partials = static_cast<A*>(partials.data_ptr());
      launch_cooperative(kernel, *grid, stream(dev.index), a);
      taken = true;
    });
  });
  return taken;
}

}  // namespace hearth::cuda
