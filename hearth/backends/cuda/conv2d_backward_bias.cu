// conv2d_backward_bias on CUDA (contract in hearth/dispatch/schemas/conv2d.h):
// the bias gradient, and with the fused ReLU's saved output, the masked
// gradient that the other backward passes of conv2d_relu take, written by the
// pass that sums it.
#include "hearth/dispatch/schemas/conv2d.h"

#include <algorithm>
#include <type_traits>

#include "hearth/backends/cuda/conv2d_plans.h"
#include "hearth/backends/cuda/loops.cuh"
#include "hearth/backends/cuda/nn_util.cuh"
#include "hearth/backends/cuda/row_reduce.cuh"
#include "hearth/dispatch/registry.h"

namespace hearth::cuda {
namespace {

// grad_bias[o] = sum of dy[:, o, :, :]. cuDNN's backward-bias rejects bfloat16,
// so it is reduced here in two passes, both in a fixed order (deterministic):
// the row engine sums each (n, o) plane, [N*C, H*W] dense rows, into float
// (double for float64) partials, reading dy once at full bandwidth; then one
// warp per channel adds its N partials. (One block per channel striding over
// planes read memory far below bandwidth: 6 ms for VGG's first layer.)
template <typename D>
struct PlaneSum {
  using In = D;
  using State = std::conditional_t<std::is_same_v<D, double>, double, float>;
  State* out;
  __device__ State init() const { return State(0); }
  __device__ void add(State& s, D v, int64_t) const { s += static_cast<State>(to_acc(v)); }
  __device__ State combine(State a, State b) const { return a + b; }
  __device__ static State shfl_xor(State s, int m) { return __shfl_xor_sync(0xffffffffu, s, m); }
  __device__ void finish(int64_t row, State s) const { out[row] = s; }
};

// The NHWC case: dy is the dense matrix [N*H*W, C]. Block (x, y) sums the rows
// of chunk y for 32 adjacent channels (one warp reads 32 neighbouring values),
// 8 row lanes a column, then folds its lanes; partial[chunk][c] holds the result
// and sum_planes_over_batch adds the chunks, in a fixed order again.
constexpr int kColumnTile = 32;
constexpr int kRowLanes = 8;

// With kMasked, dy is first masked by the fused ReLU's saved output y (zero
// where y is not positive) and the masked value is written to `masked`.
template <typename D, typename A, bool kMasked>
__global__ void column_chunk_sums(const D* dy, const D* y, D* masked, A* partial, int64_t rows, int64_t channels,
                                  int64_t rows_per_chunk) {
  __shared__ A lanes[kRowLanes][kColumnTile];
  const int64_t c = static_cast<int64_t>(blockIdx.x) * kColumnTile + threadIdx.x;
  const int64_t r0 = static_cast<int64_t>(blockIdx.y) * rows_per_chunk;
  const int64_t r1 = min(rows, r0 + rows_per_chunk);
  A s = 0;
  if (c < channels)
    for (int64_t r = r0 + threadIdx.y; r < r1; r += kRowLanes) {
      D g = dy[r * channels + c];
      if constexpr (kMasked) {
        if (!(to_acc(y[r * channels + c]) > acc_t<D>(0))) g = from_acc<D>(acc_t<D>(0));
        masked[r * channels + c] = g;
      }
      s += static_cast<A>(to_acc(g));
    }
  lanes[threadIdx.y][threadIdx.x] = s;
  __syncthreads();
  if (threadIdx.y != 0 || c >= channels) return;
  A total = 0;
  for (int k = 0; k < kRowLanes; ++k) total += lanes[k][threadIdx.x];
  partial[static_cast<int64_t>(blockIdx.y) * channels + c] = total;
}

// One warp per channel: lane l adds partials l, l + 32, ..., then the warp
// folds its lanes in a fixed butterfly order. (A thread per channel walking
// all of them took ~500 dependent loads for NHWC's 528 chunks: ~30 us per
// call, ~0.3 ms of a VGG16 step, next to a first pass of 20-470 us.)
constexpr int kFoldWarps = 8;
template <typename D, typename A>
__global__ void __launch_bounds__(kFoldWarps * 32)
    sum_planes_over_batch(const A* __restrict__ partial, D* __restrict__ db, int64_t n, int64_t channels) {
  const int64_t o = static_cast<int64_t>(blockIdx.x) * kFoldWarps + threadIdx.x / 32;
  const int lane = static_cast<int>(threadIdx.x % 32);
  if (o >= channels) return;  // a whole warp: o is the warp's
  A acc = 0;
  for (int64_t b = lane; b < n; b += 32) acc += partial[b * channels + o];
#pragma unroll
  for (int m = 16; m > 0; m /= 2) acc += __shfl_xor_sync(0xffffffffu, acc, m);
  if (lane == 0) db[o] = from_acc<D>(acc);
}

unsigned fold_blocks(int64_t channels) { return static_cast<unsigned>((channels + kFoldWarps - 1) / kFoldWarps); }

// Chunks of rows for column_chunk_sums: enough blocks to fill the device a few
// times over, each chunk at least kMinChunkRows rows long.
int64_t column_chunks(int64_t rows, int64_t column_tiles, int device) {
  constexpr int64_t kMinChunkRows = 64;
  const int64_t want = 4 * static_cast<int64_t>(context(device).props.multiProcessorCount) / column_tiles;
  const int64_t most = (rows + kMinChunkRows - 1) / kMinChunkRows;
  return std::clamp<int64_t>(std::min(want, most), 1, 65535);
}

// g where y is positive, else 0, over n elements (relu_backward's rule).
template <typename D>
__global__ void mask_by_relu_output(const D* g, const D* y, D* out, int64_t n) {
  for (int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < n;
       i += static_cast<int64_t>(gridDim.x) * blockDim.x)
    out[i] = to_acc(y[i]) > acc_t<D>(0) ? g[i] : from_acc<D>(acc_t<D>(0));
}

// The NHWC sums with 16-byte vectors: a thread owns VEC adjacent channels of
// its chunk's rows (blockDim.y rows apart, four in flight), masks and stores
// them as it sums (kMasked), and the block folds its row lanes in shared
// memory; partial[chunk][c] as column_chunk_sums writes it. Scalar loads of
// two bytes left the masked pass at a third of the memory's bandwidth.
template <typename D, typename A, int VEC, bool kMasked>
__global__ void __launch_bounds__(256)
    column_chunk_sums_vec(const D* __restrict__ dy, const D* __restrict__ y, D* __restrict__ masked,
                          A* __restrict__ partial, int64_t rows, int64_t channels, int64_t rows_per_chunk) {
  using P = nn::Pack<D, VEC>;
  constexpr int kInFlight = 4;
  __shared__ A lanes[256 * VEC];
  const int64_t c0 = (static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x) * VEC;
  const bool active = c0 < channels;
  const int64_t r0 = static_cast<int64_t>(blockIdx.y) * rows_per_chunk;
  const int64_t r1 = min(rows, r0 + rows_per_chunk);
  const int64_t step = blockDim.y;
  A s[VEC];
#pragma unroll
  for (int e = 0; e < VEC; ++e) s[e] = A(0);
  auto take = [&](int64_t r, const P& g, const P& yv) {
    P out;
#pragma unroll
    for (int e = 0; e < VEC; ++e) {
      out.v[e] = g.v[e];
      if constexpr (kMasked)
        if (!(to_acc(yv.v[e]) > acc_t<D>(0))) out.v[e] = from_acc<D>(acc_t<D>(0));
      s[e] += static_cast<A>(to_acc(out.v[e]));
    }
    if constexpr (kMasked) *reinterpret_cast<P*>(masked + r * channels + c0) = out;
  };
  if (active) {
    int64_t r = r0 + threadIdx.y;
    for (; r + (kInFlight - 1) * step < r1; r += kInFlight * step) {
      P g[kInFlight], yv[kInFlight];
#pragma unroll
      for (int u = 0; u < kInFlight; ++u) {
        g[u] = *reinterpret_cast<const P*>(dy + (r + u * step) * channels + c0);
        if constexpr (kMasked) yv[u] = *reinterpret_cast<const P*>(y + (r + u * step) * channels + c0);
      }
#pragma unroll
      for (int u = 0; u < kInFlight; ++u) take(r + u * step, g[u], yv[u]);
    }
    for (; r < r1; r += step) {
      const P g = *reinterpret_cast<const P*>(dy + r * channels + c0);
      P yv = g;
      if constexpr (kMasked) yv = *reinterpret_cast<const P*>(y + r * channels + c0);
      take(r, g, yv);
    }
  }
  // Fold the row lanes in a fixed order: lane 0 of each column adds them all.
  const int width = blockDim.x * VEC;
#pragma unroll
  for (int e = 0; e < VEC; ++e) lanes[threadIdx.y * width + threadIdx.x * VEC + e] = s[e];
  __syncthreads();
  if (threadIdx.y != 0 || !active) return;
#pragma unroll
  for (int e = 0; e < VEC; ++e) {
    A total = 0;
    for (unsigned k = 0; k < blockDim.y; ++k) total += lanes[k * width + threadIdx.x * VEC + e];
    partial[static_cast<int64_t>(blockIdx.y) * channels + c0 + e] = total;
  }
}

// y and masked: the fused ReLU's saved output and the masked gradient, or
// both undefined.
void conv2d_backward_bias_nhwc(const Tensor& dy, const Tensor& y, const Tensor& masked, const Tensor& db, int device) {
  const int64_t channels = dy.size(1), rows = dy.numel() / std::max<int64_t>(channels, 1);
  HEARTH_CUDA_DISPATCH_FLOATING(dy.dtype(), "conv2d_backward_bias", [&] {
    using A = typename PlaneSum<scalar_t>::State;
    constexpr int kVec = nn::kVecOf<scalar_t>;
    const scalar_t* gp = static_cast<const scalar_t*>(dy.data_ptr());
    const scalar_t* yp = y.defined() ? static_cast<const scalar_t*>(y.data_ptr()) : nullptr;
    scalar_t* mp = masked.defined() ? static_cast<scalar_t*>(masked.data_ptr()) : nullptr;
    const bool vector = channels % kVec == 0 && nn::aligned16(gp) && (!yp || nn::aligned16(yp)) &&
                        (!mp || nn::aligned16(mp));
    // Channel tiles: up to 32 threads of kVec channels across, the rest of
    // 256 threads down the rows; scalar: 32 channels by 8 rows.
    const int64_t vectors = (channels + kVec - 1) / kVec;
    const int bx = vector ? static_cast<int>(std::min<int64_t>(vectors, 32)) : kColumnTile;
    const int by = vector ? 256 / bx : kRowLanes;
    const int64_t tiles = vector ? (vectors + bx - 1) / bx : (channels + kColumnTile - 1) / kColumnTile;
    const int64_t chunks = column_chunks(rows, tiles, device);
    const int64_t rows_per_chunk = (rows + chunks - 1) / chunks;
    Tensor partial =
        Tensor::empty({chunks * channels}, std::is_same_v<A, double> ? DType::float64 : DType::float32, db.device());
    A* p = static_cast<A*>(partial.data_ptr());
    const dim3 grid(static_cast<unsigned>(tiles), static_cast<unsigned>(chunks)), block(bx, by);
    const cudaStream_t s = stream(device);
    if (vector && yp)
      column_chunk_sums_vec<scalar_t, A, kVec, true><<<grid, block, 0, s>>>(gp, yp, mp, p, rows, channels, rows_per_chunk);
    else if (vector)
      column_chunk_sums_vec<scalar_t, A, kVec, false>
          <<<grid, block, 0, s>>>(gp, nullptr, nullptr, p, rows, channels, rows_per_chunk);
    else if (yp)
      column_chunk_sums<scalar_t, A, true><<<grid, block, 0, s>>>(gp, yp, mp, p, rows, channels, rows_per_chunk);
    else
      column_chunk_sums<scalar_t, A, false><<<grid, block, 0, s>>>(gp, nullptr, nullptr, p, rows, channels, rows_per_chunk);
    sum_planes_over_batch<scalar_t, A><<<fold_blocks(channels), kFoldWarps * 32, 0, s>>>(
        p, static_cast<scalar_t*>(db.data_ptr()), chunks, channels);
  });
  HEARTH_CUDA_CHECK_LAUNCH();
}

// With the fused ReLU's saved output (input 1): NHWC masks in the summing
// pass; NCHW masks first, then sums the masked gradient.
void conv2d_backward_bias(OpCall& call) {
  const Tensor& db = call.out(0);
  const bool relu = call.inputs.size() > 1 && call.in(1).defined();
  const Tensor y = relu ? call.in(1) : Tensor(), masked = relu ? call.out(1) : Tensor();
  const int device = db.device().index;
  activate(device);
  if (channels_last(call.in(0))) return conv2d_backward_bias_nhwc(call.in(0), y, masked, db, device);
  if (relu) {
    const int64_t count = masked.numel();
    HEARTH_CUDA_DISPATCH_FLOATING(masked.dtype(), "conv2d_backward_bias", [&] {
      const unsigned blocks = static_cast<unsigned>(std::clamp<int64_t>((count + kThreads - 1) / kThreads, 1, 65535));
      mask_by_relu_output<scalar_t><<<blocks, kThreads, 0, stream(device)>>>(
          static_cast<const scalar_t*>(call.in(0).data_ptr()), static_cast<const scalar_t*>(y.data_ptr()),
          static_cast<scalar_t*>(masked.data_ptr()), count);
    });
    HEARTH_CUDA_CHECK_LAUNCH();
  }
  const Tensor& dy = relu ? masked : call.in(0);
  const int64_t n = dy.size(0), channels = dy.size(1), plane = dy.size(2) * dy.size(3);
  HEARTH_CUDA_DISPATCH_FLOATING(dy.dtype(), "conv2d_backward_bias", [&] {
    using A = typename PlaneSum<scalar_t>::State;
    Tensor partial =
        Tensor::empty({n * channels}, std::is_same_v<A, double> ? DType::float64 : DType::float32, db.device());
    A* p = static_cast<A*>(partial.data_ptr());
    if (plane > 0)
      rowred::reduce_rows(PlaneSum<scalar_t>{p}, dy, n * channels, plane);
    else
      HEARTH_CUDA_CHECK(cudaMemsetAsync(p, 0, partial.nbytes(), stream(device)));
    sum_planes_over_batch<scalar_t, A><<<fold_blocks(channels), kFoldWarps * 32, 0, stream(device)>>>(
        p, static_cast<scalar_t*>(db.data_ptr()), n, channels);
  });
  HEARTH_CUDA_CHECK_LAUNCH();
}

DeviceKind cuda_kind() { return register_device_kind("cuda"); }

HEARTH_REGISTER_KERNEL(conv2d_backward_bias, cuda_kind(), conv2d_backward_bias, DTypeSet::floating());

}  // namespace
}  // namespace hearth::cuda
