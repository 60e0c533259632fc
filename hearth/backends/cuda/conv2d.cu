// conv2d forward, backward-data, backward-filter and backward-bias through
// cuDNN: its graph API with a cached execution plan per shape
// (conv2d_plans.cu), else the legacy entry points (here), whose algorithm for each (shape, dtype, pass) is chosen
// once and cached: by cuDNN's heuristics, or, with HEARTH_CUDNN_BENCHMARK=1
// (cudnn.benchmark), by timing the candidates on the first call.
#include <algorithm>
#include <array>
#include <map>
#include <mutex>
#include <tuple>

#include "hearth/backends/cuda/conv2d_plans.h"
#include "hearth/backends/cuda/cudnn_util.h"
#include "hearth/backends/cuda/gemm.h"
#include "hearth/backends/cuda/loops.cuh"
#include "hearth/backends/cuda/row_reduce.cuh"
#include "hearth/core/env.h"
#include "hearth/dispatch/nchw_detour.h"
#include "hearth/dispatch/registry.h"
#include "hearth/dispatch/schemas/conv2d.h"

namespace hearth::cuda {
namespace {

using Key = std::tuple<int, int, DType, std::vector<int64_t>>;

struct Choice {
  int algo = 0;
  size_t workspace = 0;
};

std::mutex& cache_mutex() {
  static std::mutex m;
  return m;
}
std::map<Key, Choice>& cache() {
  static std::map<Key, Choice> c;
  return c;
}

struct ConvSetup {
  TensorDesc x, y;
  FilterDesc w;
  ConvDesc conv;
  std::vector<int64_t> geometry;  // cache key part
};

// x [N,C,H,W], w [O,Cg,kH,kW], y [N,O,OH,OW], all dense NCHW or all dense NHWC;
// the tensor descriptors carry the strides, the filter descriptor the format.
void setup(ConvSetup& s, const Tensor& x, const Tensor& w, const Tensor& y, const Conv2dAttrs& a) {
  DType dt = x.dtype();
  const bool nhwc = channels_last(x);
  s.x.set(x);
  s.y.set(y);
  HEARTH_CUDNN_CHECK(cudnnSetFilter4dDescriptor(s.w.d, cudnn_dtype(dt), nhwc ? CUDNN_TENSOR_NHWC : CUDNN_TENSOR_NCHW,
                                                static_cast<int>(w.size(0)), static_cast<int>(w.size(1)),
                                                static_cast<int>(w.size(2)), static_cast<int>(w.size(3))));
  cudnnDataType_t compute = dt == DType::float64 ? CUDNN_DATA_DOUBLE : CUDNN_DATA_FLOAT;
  HEARTH_CUDNN_CHECK(cudnnSetConvolution2dDescriptor(
      s.conv.d, static_cast<int>(a.padding[0]), static_cast<int>(a.padding[1]), static_cast<int>(a.stride[0]),
      static_cast<int>(a.stride[1]), static_cast<int>(a.dilation[0]), static_cast<int>(a.dilation[1]),
      CUDNN_CROSS_CORRELATION, compute));
  HEARTH_CUDNN_CHECK(cudnnSetConvolutionGroupCount(s.conv.d, static_cast<int>(a.groups)));
  // float32: TF32 tensor cores unless disabled (cuDNN's and PyTorch's default);
  // half types: tensor cores.
  cudnnMathType_t math = CUDNN_DEFAULT_MATH;
  if (dt == DType::float32 && !tf32_allowed()) math = CUDNN_FMA_MATH;
  if (is_half_type(dt)) math = CUDNN_TENSOR_OP_MATH;
  HEARTH_CUDNN_CHECK(cudnnSetConvolutionMathType(s.conv.d, math));
  s.geometry = {x.size(0),
                x.size(1),
                x.size(2),
                x.size(3),
                w.size(0),
                w.size(1),
                w.size(2),
                w.size(3),
                a.stride[0],
                a.stride[1],
                a.padding[0],
                a.padding[1],
                a.dilation[0],
                a.dilation[1],
                a.groups,
                tf32_allowed() ? 1 : 0,
                cudnn_benchmark_mode() ? 1 : 0,
                nhwc ? 1 : 0};
}

template <typename Perf>
Choice pick(const Perf* perf, int n, const char* what) {
  for (int i = 0; i < n; ++i)
    if (perf[i].status == CUDNN_STATUS_SUCCESS && perf[i].memory <= kMaxConvWorkspace)
      return Choice{static_cast<int>(perf[i].algo), perf[i].memory};
  HEARTH_THROW(DeviceError, "[conv2d] cuDNN found no usable algorithm for the ", what, " pass");
}

Choice choose(ConvPass pass, ConvSetup& s, const Tensor& x, const Tensor& w, const Tensor& y, cudnnHandle_t h) {
  Key key{x.device().index, static_cast<int>(pass), x.dtype(), s.geometry};
  {
    std::lock_guard<std::mutex> lock(cache_mutex());
    auto it = cache().find(key);
    if (it != cache().end()) return it->second;
  }
  constexpr int kMax = 16;
  int found = 0;
  Choice c;
  const bool bench = cudnn_benchmark_mode();
  Device d = x.device();
  if (pass == ConvPass::forward) {
    cudnnConvolutionFwdAlgoPerf_t perf[kMax];
    if (bench) {
      Tensor ws = workspace_tensor(size_t(512) << 20, d);
      HEARTH_CUDNN_CHECK(cudnnFindConvolutionForwardAlgorithmEx(h, s.x.d, x.data_ptr(), s.w.d, w.data_ptr(), s.conv.d,
                                                                s.y.d, y.data_ptr(), kMax, &found, perf, ws.data_ptr(),
                                                                size_t(512) << 20));
    } else {
      HEARTH_CUDNN_CHECK(cudnnGetConvolutionForwardAlgorithm_v7(h, s.x.d, s.w.d, s.conv.d, s.y.d, kMax, &found, perf));
    }
    c = pick(perf, found, "forward");
  } else if (pass == ConvPass::backward_data) {
    cudnnConvolutionBwdDataAlgoPerf_t perf[kMax];
    if (bench) {
      Tensor ws = workspace_tensor(size_t(512) << 20, d);
      HEARTH_CUDNN_CHECK(cudnnFindConvolutionBackwardDataAlgorithmEx(h, s.w.d, w.data_ptr(), s.y.d, y.data_ptr(),
                                                                     s.conv.d, s.x.d, x.data_ptr(), kMax, &found, perf,
                                                                     ws.data_ptr(), size_t(512) << 20));
    } else {
      HEARTH_CUDNN_CHECK(
          cudnnGetConvolutionBackwardDataAlgorithm_v7(h, s.w.d, s.y.d, s.conv.d, s.x.d, kMax, &found, perf));
    }
    c = pick(perf, found, "backward-data");
  } else {
    cudnnConvolutionBwdFilterAlgoPerf_t perf[kMax];
    if (bench) {
      Tensor ws = workspace_tensor(size_t(512) << 20, d);
      HEARTH_CUDNN_CHECK(cudnnFindConvolutionBackwardFilterAlgorithmEx(h, s.x.d, x.data_ptr(), s.y.d, y.data_ptr(),
                                                                       s.conv.d, s.w.d, w.data_ptr(), kMax, &found,
                                                                       perf, ws.data_ptr(), size_t(512) << 20));
    } else {
      HEARTH_CUDNN_CHECK(
          cudnnGetConvolutionBackwardFilterAlgorithm_v7(h, s.x.d, s.y.d, s.conv.d, s.w.d, kMax, &found, perf));
    }
    c = pick(perf, found, "backward-filter");
  }
  std::lock_guard<std::mutex> lock(cache_mutex());
  cache()[key] = c;
  return c;
}

struct Scalars {  // alpha/beta in the type cuDNN wants for the data type
  float f1 = 1.f, f0 = 0.f;
  double d1 = 1.0, d0 = 0.0;
  const void* one(DType t) const { return t == DType::float64 ? static_cast<const void*>(&d1) : &f1; }
  const void* zero(DType t) const { return t == DType::float64 ? static_cast<const void*>(&d0) : &f0; }
};

template <typename D>
struct AddFn {
  __device__ D operator()(D y, D b) const { return from_acc<D>(to_acc(y) + to_acc(b)); }
};

// The bias and the ReLU after it in one pass, rounded once; NaN stays NaN,
// as with the relu op.
template <typename D>
struct AddReluFn {
  __device__ D operator()(D y, D b) const {
    const D v = from_acc<D>(to_acc(y) + to_acc(b));
    return to_acc(v) < acc_t<D>(0) ? from_acc<D>(acc_t<D>(0)) : v;
  }
};

template <typename D>
struct ReluFn {
  __device__ D operator()(D y) const { return to_acc(y) < acc_t<D>(0) ? from_acc<D>(acc_t<D>(0)) : y; }
};

// y += bias over the channels of an NHWC output, through the elementwise
// engine: with the bias broadcast as [1, O, 1, 1], the pixels merge into one
// dim and the channels stay innermost and dense on both sides, so the add
// runs on 16-byte vectors. cuDNN's add is kept for the legacy NCHW path
// without a ReLU; otherwise both layouts take the engine (an NCHW bias is a
// broadcast over the planes).
void add_bias(const Tensor& y, const Tensor& bias, bool relu) {
  const Tensor b4 = bias.as_strided_view({1, bias.size(0), 1, 1}, {bias.size(0), 1, 1, 1}, bias.offset());
  HEARTH_CUDA_DISPATCH_FLOATING(y.dtype(), "conv2d", [&] {
    if (relu)
      gpu_elementwise<scalar_t, scalar_t, scalar_t>(y, {&y, &b4}, AddReluFn<scalar_t>{});
    else
      gpu_elementwise<scalar_t, scalar_t, scalar_t>(y, {&y, &b4}, AddFn<scalar_t>{});
  });
}

// max(y + bias + residual, 0) in one pass, rounded after each add as the
// composition rounds.
template <typename D>
struct AddBiasResidualReluFn {
  __device__ D operator()(D y, D b, D r) const {
    const D biased = from_acc<D>(to_acc(y) + to_acc(b));
    const D v = from_acc<D>(to_acc(biased) + to_acc(r));
    return to_acc(v) < acc_t<D>(0) ? from_acc<D>(acc_t<D>(0)) : v;
  }
};

// y = max(y + bias + residual, 0) (without a bias: max(y + residual, 0)), the
// residual in y's shape and memory: one pass over the output, as batch norm's
// own add-ReLU pass was before the fold.
void add_bias_residual_relu(const Tensor& y, const Tensor& bias, const Tensor& residual) {
  HEARTH_CUDA_DISPATCH_FLOATING(y.dtype(), "conv2d_add_relu", [&] {
    if (bias.defined()) {
      const Tensor b4 = bias.as_strided_view({1, bias.size(0), 1, 1}, {bias.size(0), 1, 1, 1}, bias.offset());
      gpu_elementwise<scalar_t, scalar_t, scalar_t, scalar_t>(y, {&y, &b4, &residual},
                                                              AddBiasResidualReluFn<scalar_t>{});
    } else {
      gpu_elementwise<scalar_t, scalar_t, scalar_t>(y, {&y, &residual}, AddReluFn<scalar_t>{});
    }
  });
}

void relu_in_place(const Tensor& y) {
  HEARTH_CUDA_DISPATCH_FLOATING(y.dtype(), "conv2d",
                                [&] { gpu_elementwise<scalar_t, scalar_t>(y, {&y}, ReluFn<scalar_t>{}); });
}

void conv2d_forward(OpCall& call) {
  const Tensor &x = call.in(0), &w = call.in(1), &bias = call.in(2), &y = call.out(0);
  const Tensor residual = call.inputs.size() > 3 ? call.in(3) : Tensor();
  const int device = y.device().index;
  activate(device);
  cudnnHandle_t h = cudnn_handle(device);
  const Conv2dAttrs& attrs = call.attrs<Conv2dAttrs>();
  if ((bias.defined() || residual.defined() || attrs.relu) && run_fused_forward(x, w, y, bias, residual, attrs, h))
    return;
  const bool graphed = run_graph_pass(ConvPass::forward, x, w, y, attrs, h);
  Scalars k;
  if (!graphed) {
    ConvSetup s;  // the legacy path's descriptors, created only where it runs
    setup(s, x, w, y, call.attrs<Conv2dAttrs>());
    Choice c = choose(ConvPass::forward, s, x, w, y, h);
    Tensor ws = workspace_tensor(c.workspace, y.device());
    HEARTH_CUDNN_CHECK(cudnnConvolutionForward(h, k.one(x.dtype()), s.x.d, x.data_ptr(), s.w.d, w.data_ptr(), s.conv.d,
                                               static_cast<cudnnConvolutionFwdAlgo_t>(c.algo),
                                               ws.defined() ? ws.data_ptr() : nullptr, c.workspace, k.zero(x.dtype()),
                                               s.y.d, y.data_ptr()));
  }
  const bool relu = attrs.relu;
  if (residual.defined()) {
    add_bias_residual_relu(y, bias, residual);
  } else if (bias.defined() && (relu || channels_last(y) || graphed)) {
    add_bias(y, bias, relu);
  } else if (bias.defined()) {
    TensorDesc b, yd;
    b.set_nchw(bias.dtype(), 1, static_cast<int>(bias.size(0)), 1, 1);
    yd.set(y);
    HEARTH_CUDNN_CHECK(cudnnAddTensor(h, k.one(x.dtype()), b.d, bias.data_ptr(), k.one(x.dtype()), yd.d, y.data_ptr()));
  } else if (relu) {
    relu_in_place(y);
  }
}

void conv2d_backward_input(OpCall& call) {
  const Tensor &dy = call.in(0), &w = call.in(1), &dx = call.out(0);
  const int device = dx.device().index;
  activate(device);
  cudnnHandle_t h = cudnn_handle(device);
  if (run_graph_pass(ConvPass::backward_data, dx, w, dy, call.attrs<Conv2dAttrs>(), h)) return;
  ConvSetup s;
  setup(s, dx, w, dy, call.attrs<Conv2dAttrs>());
  Choice c = choose(ConvPass::backward_data, s, dx, w, dy, h);
  Tensor ws = workspace_tensor(c.workspace, dx.device());
  Scalars k;
  HEARTH_CUDNN_CHECK(cudnnConvolutionBackwardData(h, k.one(dx.dtype()), s.w.d, w.data_ptr(), s.y.d, dy.data_ptr(),
                                                  s.conv.d, static_cast<cudnnConvolutionBwdDataAlgo_t>(c.algo),
                                                  ws.defined() ? ws.data_ptr() : nullptr, c.workspace,
                                                  k.zero(dx.dtype()), s.x.d, dx.data_ptr()));
}

void conv2d_backward_weight(OpCall& call) {
  const Tensor &dy = call.in(0), &x = call.in(1), &dw = call.out(0);
  const int device = dw.device().index;
  activate(device);
  cudnnHandle_t h = cudnn_handle(device);
  if (run_graph_pass(ConvPass::backward_filter, x, dw, dy, call.attrs<Conv2dAttrs>(), h)) return;
  ConvSetup s;
  setup(s, x, dw, dy, call.attrs<Conv2dAttrs>());
  Choice c = choose(ConvPass::backward_filter, s, x, dw, dy, h);
  Tensor ws = workspace_tensor(c.workspace, dw.device());
  Scalars k;
  HEARTH_CUDNN_CHECK(cudnnConvolutionBackwardFilter(h, k.one(x.dtype()), s.x.d, x.data_ptr(), s.y.d, dy.data_ptr(),
                                                    s.conv.d, static_cast<cudnnConvolutionBwdFilterAlgo_t>(c.algo),
                                                    ws.defined() ? ws.data_ptr() : nullptr, c.workspace,
                                                    k.zero(x.dtype()), s.w.d, dw.data_ptr()));
}

// grad_bias[o] = sum of dy[:, o, :, :]. cuDNN's backward-bias rejects bfloat16,
// so it is reduced here in two passes, both in a fixed order (deterministic):
// the row engine sums each (n, o) plane, [N*C, H*W] dense rows, into float
// (double for float64) partials, reading dy once at full bandwidth; then one
// thread per channel adds its N partials. (One block per channel striding over
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

template <typename D, typename A>
__global__ void sum_planes_over_batch(const A* partial, D* db, int64_t n, int64_t channels) {
  const int64_t o = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (o >= channels) return;
  A acc = 0;
  for (int64_t b = 0; b < n; ++b) acc += partial[b * channels + o];
  db[o] = from_acc<D>(acc);
}

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

// y and masked: the fused ReLU's saved output and the masked gradient, or
// both undefined.
void conv2d_backward_bias_nhwc(const Tensor& dy, const Tensor& y, const Tensor& masked, const Tensor& db, int device) {
  const int64_t channels = dy.size(1), rows = dy.numel() / std::max<int64_t>(channels, 1);
  const int64_t tiles = (channels + kColumnTile - 1) / kColumnTile;
  const int64_t chunks = column_chunks(rows, tiles, device);
  const int64_t rows_per_chunk = (rows + chunks - 1) / chunks;
  HEARTH_CUDA_DISPATCH_FLOATING(dy.dtype(), "conv2d_backward_bias", [&] {
    using A = typename PlaneSum<scalar_t>::State;
    Tensor partial =
        Tensor::empty({chunks * channels}, std::is_same_v<A, double> ? DType::float64 : DType::float32, db.device());
    A* p = static_cast<A*>(partial.data_ptr());
    const dim3 grid(static_cast<unsigned>(tiles), static_cast<unsigned>(chunks)), block(kColumnTile, kRowLanes);
    const scalar_t* gp = static_cast<const scalar_t*>(dy.data_ptr());
    if (y.defined())
      column_chunk_sums<scalar_t, A, true><<<grid, block, 0, stream(device)>>>(
          gp, static_cast<const scalar_t*>(y.data_ptr()), static_cast<scalar_t*>(masked.data_ptr()), p, rows, channels,
          rows_per_chunk);
    else
      column_chunk_sums<scalar_t, A, false>
          <<<grid, block, 0, stream(device)>>>(gp, nullptr, nullptr, p, rows, channels, rows_per_chunk);
    sum_planes_over_batch<scalar_t, A>
        <<<static_cast<unsigned>((channels + kThreads - 1) / kThreads), kThreads, 0, stream(device)>>>(
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
    sum_planes_over_batch<scalar_t, A>
        <<<static_cast<unsigned>((channels + kThreads - 1) / kThreads), kThreads, 0, stream(device)>>>(
            p, static_cast<scalar_t*>(db.data_ptr()), n, channels);
  });
  HEARTH_CUDA_CHECK_LAUNCH();
}

DeviceKind cuda_kind() { return register_device_kind("cuda"); }

// cuDNN has NHWC kernels for the float types but none for float64 (PyTorch
// keeps double convolutions NCHW for the same reason): those calls detour.
template <KernelFn kernel>
void nhwc_unless_double(OpCall& call) {
  if (call.out(0).dtype() == DType::float64) return run_in_nchw(call, kernel);
  kernel(call);
}

// conv2d_relu and conv2d_add_relu: the same kernel, which reads the ReLU from
// the attributes and the residual from a fourth input.
HEARTH_REGISTER_KERNEL(conv2d, cuda_kind(), nhwc_unless_double<conv2d_forward>, DTypeSet::floating());
HEARTH_REGISTER_KERNEL(conv2d_relu, cuda_kind(), nhwc_unless_double<conv2d_forward>, DTypeSet::floating());
HEARTH_REGISTER_KERNEL(conv2d_add_relu, cuda_kind(), nhwc_unless_double<conv2d_forward>, DTypeSet::floating());
HEARTH_REGISTER_KERNEL(conv2d_backward_input, cuda_kind(), nhwc_unless_double<conv2d_backward_input>,
                       DTypeSet::floating());
HEARTH_REGISTER_KERNEL(conv2d_backward_weight, cuda_kind(), nhwc_unless_double<conv2d_backward_weight>,
                       DTypeSet::floating());
HEARTH_REGISTER_KERNEL(conv2d_backward_bias, cuda_kind(), conv2d_backward_bias, DTypeSet::floating());

}  // namespace
}  // namespace hearth::cuda
