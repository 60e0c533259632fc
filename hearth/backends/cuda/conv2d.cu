// conv2d forward, backward-data and backward-filter through
// cuDNN: its graph API with a cached execution plan per shape
// (conv2d_plans.cu), else the legacy entry points (here), whose algorithm for each (shape, dtype, pass) is chosen
// once and cached: by cuDNN's heuristics, or, with HEARTH_CUDNN_BENCHMARK=1
// (cudnn.benchmark), by timing the candidates on the first call.
// The bias gradient has a file of its own, conv2d_backward_bias.cu.
#include <algorithm>
#include <array>
#include <map>
#include <mutex>
#include <tuple>

#include "hearth/backends/cuda/conv2d_plans.h"
#include "hearth/backends/cuda/cudnn_util.h"
#include "hearth/backends/cuda/gemm.h"
#include "hearth/backends/cuda/loops.cuh"
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

// dx = the data gradient of dy through w (dx overwritten).
void backward_data(const Tensor& dy, const Tensor& w, const Tensor& dx, const Conv2dAttrs& a, cudnnHandle_t h) {
  if (run_graph_pass(ConvPass::backward_data, dx, w, dy, a, h)) return;
  ConvSetup s;
  setup(s, dx, w, dy, a);
  Choice c = choose(ConvPass::backward_data, s, dx, w, dy, h);
  Tensor ws = workspace_tensor(c.workspace, dx.device());
  Scalars k;
  HEARTH_CUDNN_CHECK(cudnnConvolutionBackwardData(h, k.one(dx.dtype()), s.w.d, w.data_ptr(), s.y.d, dy.data_ptr(),
                                                  s.conv.d, static_cast<cudnnConvolutionBwdDataAlgo_t>(c.algo),
                                                  ws.defined() ? ws.data_ptr() : nullptr, c.workspace,
                                                  k.zero(dx.dtype()), s.x.d, dx.data_ptr()));
}

// dx = the data gradient + partial (schemas/conv2d.h; partial is usually dx
// itself, else copied there first). Where a graph plan with beta = 1 takes the
// shape, cuDNN adds into dx in its epilogue: one read of dx more than the
// plain pass, instead of a separate add that reads two tensors and writes a
// third. Elsewhere (no such engine, the legacy path, float64's NCHW detour)
// the gradient goes to a tensor of its own and one elementwise pass adds it,
// rounded in float as the add op rounds: never an error for want of an engine.
void backward_data_accumulating(const Tensor& dy, const Tensor& w, const Tensor& dx, const Tensor& partial,
                                const Conv2dAttrs& a, cudnnHandle_t h) {
  if (!(partial.data_ptr() == dx.data_ptr() && partial.strides() == dx.strides())) copy_into(dx, partial);
  if (run_graph_pass(ConvPass::backward_data, dx, w, dy, a, h, /*accumulate=*/true)) return;
  Tensor own = Tensor::empty({dx.numel()}, dx.dtype(), dx.device()).as_strided_view(dx.shape(), dx.strides(), 0);
  backward_data(dy, w, own, a, h);
  HEARTH_CUDA_DISPATCH_FLOATING(dx.dtype(), "conv2d_backward_input", [&] {
    gpu_elementwise<scalar_t, scalar_t, scalar_t>(dx, {&dx, &own}, AddFn<scalar_t>{});
  });
}

void conv2d_backward_input(OpCall& call) {
  const Tensor &dy = call.in(0), &w = call.in(1), &dx = call.out(0);
  const Tensor partial = call.inputs.size() > 2 ? call.in(2) : Tensor();
  const int device = dx.device().index;
  activate(device);
  cudnnHandle_t h = cudnn_handle(device);
  if (partial.defined())
    backward_data_accumulating(dy, w, dx, partial, call.attrs<Conv2dAttrs>(), h);
  else
    backward_data(dy, w, dx, call.attrs<Conv2dAttrs>(), h);
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

}  // namespace
}  // namespace hearth::cuda
