// One execution plan per (pass, shapes, layout, dtype, pointer alignment, TF32,
// epilogue, beta), built on first use and replayed: a call then costs one variant
// pack and one cudnnBackendExecute on the host, against the legacy entry
// points' descriptor set-up and per-call planning (~150 us a convolution on
// the host, which bound ResNet-50's eager step). Shapes no engine takes,
// float64 and strided tensors keep the legacy path; HEARTH_CUDNN_LEGACY=1
// forces it everywhere (for comparisons). HEARTH_CUDNN_BENCHMARK=1 times the
// heuristics' first candidates of each plan and keeps the fastest.
#include <array>
#include <functional>
#include <map>
#include <mutex>
#include <optional>
#include <tuple>

#include "hearth/backends/cuda/conv2d_plans.h"
#include "hearth/backends/cuda/cuda_switches.h"
#include "hearth/backends/cuda/cudnn_graph.h"
#include "hearth/backends/cuda/cudnn_util.h"
#include "hearth/backends/cuda/gemm.h"
#include "hearth/core/backend_options.h"

namespace hearth::cuda {
namespace {

namespace graph = cudnn_graph;

// (device, plan kind, dtype, geometry): the kinds are the three passes and the fused forward.
using PlanKey = std::tuple<int, int, DType, std::vector<int64_t>>;
constexpr int kFusedForward = 3;

// The cached plan for `key`, built by `build` on first use (nullptr, cached
// too, when no engine takes the graph).
std::shared_ptr<graph::ExecutionPlan> cached_plan(PlanKey key,
                                                  const std::function<std::shared_ptr<graph::ExecutionPlan>()>& build) {
  static std::mutex mutex;
  static std::map<PlanKey, std::shared_ptr<graph::ExecutionPlan>> cache;
  {
    std::lock_guard<std::mutex> lock(mutex);
    auto it = cache.find(key);
    if (it != cache.end()) return it->second;
  }
  std::shared_ptr<graph::ExecutionPlan> plan = build();
  std::lock_guard<std::mutex> lock(mutex);
  cache[std::move(key)] = plan;
  return plan;
}

// Strides of a tensor of these dims, dense in NCHW or NHWC order.
std::array<int64_t, 4> dense_strides(const Shape& d, bool nhwc) {
  if (!nhwc) return {d[1] * d[2] * d[3], d[2] * d[3], d[3], 1};
  return {d[1] * d[2] * d[3], 1, d[3] * d[1], d[1]};
}

// Dense in the format (strides of size-1 dims are free).
bool dense_in(const Tensor& t, bool nhwc) {
  const std::array<int64_t, 4> want = dense_strides(t.shape(), nhwc);
  for (int i = 0; i < 4; ++i)
    if (t.shape()[i] != 1 && t.strides()[i] != want[i]) return false;
  return true;
}

bool graph_path_wanted(const Tensor& x, const Tensor& w, const Tensor& y) {
  static const bool legacy = switches::cudnn_legacy().get();
  if (legacy || x.dtype() == DType::float64) return false;
  const bool nhwc = channels_last(x);
  return dense_in(x, nhwc) && dense_in(w, nhwc) && dense_in(y, nhwc);
}

enum : int64_t { kUidX = 1, kUidW = 2, kUidY = 3, kUidBias = 4, kUidResidual = 5, kUidFirstVirtual = 100 };

// What every plan of a convolution is keyed by: the shapes of x, w and y, the
// geometry, the layout, TF32, and the alignment of each pointer it binds.
std::vector<int64_t> conv_geometry(const Tensor& x, const Tensor& w, const Tensor& y, const Conv2dAttrs& a) {
  std::vector<int64_t> g(x.shape().begin(), x.shape().end());
  g.insert(g.end(), w.shape().begin(), w.shape().end());
  g.insert(g.end(), y.shape().begin(), y.shape().end());
  g.insert(g.end(), {a.stride[0], a.stride[1], a.padding[0], a.padding[1], a.dilation[0], a.dilation[1],
                     channels_last(x) ? 1 : 0, tf32_allowed() ? 1 : 0, cudnn_benchmark_mode() ? 1 : 0,
                     graph::pointer_alignment(x.data_ptr()), graph::pointer_alignment(w.data_ptr()),
                     graph::pointer_alignment(y.data_ptr())});
  return g;
}

// A tensor descriptor dense in the call's layout.
graph::Descriptor tensor_spec(int64_t uid, const Shape& shape, cudnnDataType_t type, bool nhwc, int64_t align,
                              bool is_virtual = false) {
  const std::array<int64_t, 4> strides = dense_strides(shape, nhwc);
  return graph::make_tensor(graph::TensorSpec{uid, type, std::vector<int64_t>(shape.begin(), shape.end()),
                                              std::vector<int64_t>(strides.begin(), strides.end()), align, is_virtual});
}

graph::Descriptor convolution(const Conv2dAttrs& a) {
  return graph::make_convolution(graph::ConvGeometry{
      {a.padding[0], a.padding[1]}, {a.stride[0], a.stride[1]}, {a.dilation[0], a.dilation[1]}, CUDNN_DATA_FLOAT});
}

graph::EngineFilter engine_filter(DType dtype, bool allow_runtime_compiled) {
  graph::EngineFilter filter;
  filter.allow_tensor_core = dtype != DType::float32 || tf32_allowed();
  filter.allow_runtime_compiled = allow_runtime_compiled;
  filter.max_workspace = static_cast<int64_t>(kMaxConvWorkspace);
  return filter;
}

void execute(const graph::ExecutionPlan& plan, cudnnHandle_t h, const std::vector<int64_t>& uids,
             const std::vector<void*>& data, Device device) {
  Tensor ws = workspace_tensor(static_cast<size_t>(plan.workspace_bytes()), device);
  plan.execute(h, uids, data, ws.defined() ? ws.data_ptr() : nullptr);
}

// cudnn.benchmark for the graph path (HEARTH_CUDNN_BENCHMARK=1): a timer for
// build_plan that runs each candidate on the call's own tensors, with a
// scratch buffer in place of the one the pass writes (data[written], of
// `written_bytes`: a pass that adds into its output must not add more than
// once), once to warm up and then kTimedRuns times between two events on the
// handle's stream. None (the heuristics' first plan) outside benchmark mode,
// and while the stream is being recorded into a step graph, which would
// keep the trials.
std::optional<graph::PlanTimer> benchmark_timer(cudnnHandle_t h, std::vector<int64_t> uids, std::vector<void*> data,
                                                size_t written, size_t written_bytes, Device device) {
  if (!cudnn_benchmark_mode()) return std::nullopt;
  cudaStream_t stream = nullptr;
  if (cudnnGetStream(h, &stream) != CUDNN_STATUS_SUCCESS) return std::nullopt;
  cudaStreamCaptureStatus capture = cudaStreamCaptureStatusNone;
  if (cudaStreamIsCapturing(stream, &capture) != cudaSuccess || capture != cudaStreamCaptureStatusNone)
    return std::nullopt;
  Tensor scratch = workspace_tensor(written_bytes, device);
  data[written] = scratch.defined() ? scratch.data_ptr() : nullptr;
  return graph::PlanTimer([=](const graph::ExecutionPlan& plan) -> double {
    constexpr int kTimedRuns = 3;
    cudaEvent_t began = nullptr, ended = nullptr;
    double ms = -1.0;
    try {
      Tensor ws = workspace_tensor(static_cast<size_t>(plan.workspace_bytes()), device);
      void* workspace = ws.defined() ? ws.data_ptr() : nullptr;
      plan.execute(h, uids, data, workspace);  // warm-up: first-run costs are not the plan's speed
      if (cudaEventCreate(&began) == cudaSuccess && cudaEventCreate(&ended) == cudaSuccess &&
          cudaEventRecord(began, stream) == cudaSuccess) {
        for (int i = 0; i < kTimedRuns; ++i) plan.execute(h, uids, data, workspace);
        float elapsed = 0.f;
        if (cudaEventRecord(ended, stream) == cudaSuccess && cudaEventSynchronize(ended) == cudaSuccess &&
            cudaEventElapsedTime(&elapsed, began, ended) == cudaSuccess)
          ms = static_cast<double>(elapsed) / kTimedRuns;
      }
    } catch (const std::exception&) {
      ms = -1.0;  // a candidate that cannot run (its workspace does not fit, the engine fails) is passed over
    }
    if (began != nullptr) cudaEventDestroy(began);
    if (ended != nullptr) cudaEventDestroy(ended);
    (void)scratch;  // kept alive with the timer
    return ms;
  });
}

// The build_plan argument for an optional timer.
const graph::PlanTimer* timer_or_null(const std::optional<graph::PlanTimer>& t) { return t ? &*t : nullptr; }

// The plan for one pass; nullptr: no engine. accumulate: the backward-data
// pass with beta = 1 (dx += the data gradient), a plan of its own: engines
// differ in what they take, and a shape may have one without the other.
std::shared_ptr<graph::ExecutionPlan> pass_plan(ConvPass pass, const Tensor& x, const Tensor& w, const Tensor& y,
                                                const Conv2dAttrs& a, cudnnHandle_t h, bool accumulate) {
  std::vector<int64_t> geometry = conv_geometry(x, w, y, a);
  geometry.push_back(accumulate ? 1 : 0);  // beta
  PlanKey key{x.device().index, static_cast<int>(pass), x.dtype(), std::move(geometry)};
  return cached_plan(std::move(key), [&]() -> std::shared_ptr<graph::ExecutionPlan> {
    const bool nhwc = channels_last(x);
    const cudnnDataType_t dt = cudnn_dtype(x.dtype());
    graph::Descriptor tx = tensor_spec(kUidX, x.shape(), dt, nhwc, graph::pointer_alignment(x.data_ptr()));
    graph::Descriptor tw = tensor_spec(kUidW, w.shape(), dt, nhwc, graph::pointer_alignment(w.data_ptr()));
    graph::Descriptor ty = tensor_spec(kUidY, y.shape(), dt, nhwc, graph::pointer_alignment(y.data_ptr()));
    graph::Descriptor conv = convolution(a);
    // The tensor the pass writes: y forward, x's gradient backward-data, w's backward-filter.
    const size_t written = pass == ConvPass::forward ? 2 : pass == ConvPass::backward_data ? 0 : 1;
    const Tensor& out = written == 2 ? y : written == 0 ? x : w;
    const std::optional<graph::PlanTimer> timer = benchmark_timer(
        h, {kUidX, kUidW, kUidY}, {x.data_ptr(), w.data_ptr(), y.data_ptr()}, written, out.nbytes(), x.device());
    std::vector<graph::Descriptor> ops;
    const char* what = "conv2d forward";
    if (pass == ConvPass::forward) {
      ops.push_back(graph::conv_forward_op(conv, tx, tw, ty, CUDNN_DATA_FLOAT));
    } else if (pass == ConvPass::backward_data && accumulate) {
      what = "conv2d backward-data adding into dx";
      try {
        ops.push_back(graph::conv_backward_data_op(conv, ty, tw, tx, CUDNN_DATA_FLOAT, /*beta=*/1.0));
      } catch (const DeviceError&) {
        return nullptr;  // a cuDNN that refuses beta = 1 here: the caller computes and adds
      }
      return graph::build_plan(h, std::move(ops), engine_filter(x.dtype(), false), what,
                               "a data gradient of its own, then an add", timer_or_null(timer));
    } else if (pass == ConvPass::backward_data) {
      ops.push_back(graph::conv_backward_data_op(conv, ty, tw, tx, CUDNN_DATA_FLOAT));
      what = "conv2d backward-data";
    } else {
      ops.push_back(graph::conv_backward_filter_op(conv, tx, ty, tw, CUDNN_DATA_FLOAT));
      what = "conv2d backward-filter";
    }
    return graph::build_plan(h, std::move(ops), engine_filter(x.dtype(), false), what, "legacy path",
                             timer_or_null(timer));
  });
}

// ---- fused epilogues -----------------------------------------------------------
// The forward with its bias, residual and ReLU as one graph: conv -> (+ bias)
// -> (+ residual) -> (ReLU) -> y, the intermediates virtual in float and y
// rounded once. cuDNN's runtime-fusion engines compile such a graph into the
// convolution's epilogue (NVRTC, once per shape), which saves the separate
// pass that reads and writes the whole output (VGG's bias + ReLU, ResNet's
// folded batch norm + add + ReLU at inference). Shapes without such an engine
// keep the convolution and an elementwise pass. Measured on an H100 (bf16,
// bench/NOTES.md section 22): ResNet-50 evaluation 1.27x and VGG16's 1.16x
// faster, VGG16 training 1.04x, for ~0.3-0.6 s of compilation per fused shape
// at first use; HEARTH_CUDNN_FUSION=0 keeps the pair (for comparisons).
bool fusion_wanted() {
  static const bool on = switches::cudnn_fusion().get();
  return on;
}

// The fused forward's tensors by uid: x, w, y, then the bias and the
// residual where the call has them.
struct FusedBindings {
  std::vector<int64_t> uids;
  std::vector<void*> data;
};
FusedBindings fused_bindings(const Tensor& x, const Tensor& w, const Tensor& y, const Tensor& bias,
                             const Tensor& residual) {
  FusedBindings b{{kUidX, kUidW, kUidY}, {x.data_ptr(), w.data_ptr(), y.data_ptr()}};
  if (bias.defined()) {
    b.uids.push_back(kUidBias);
    b.data.push_back(bias.data_ptr());
  }
  if (residual.defined()) {
    b.uids.push_back(kUidResidual);
    b.data.push_back(residual.data_ptr());
  }
  return b;
}

std::shared_ptr<graph::ExecutionPlan> fused_forward_plan(const Tensor& x, const Tensor& w, const Tensor& y,
                                                         const Tensor& bias, const Tensor& residual,
                                                         const Conv2dAttrs& a, cudnnHandle_t h) {
  const int64_t ab = bias.defined() ? graph::pointer_alignment(bias.data_ptr()) : 0;
  const int64_t ar = residual.defined() ? graph::pointer_alignment(residual.data_ptr()) : 0;
  std::vector<int64_t> geometry = conv_geometry(x, w, y, a);
  geometry.insert(geometry.end(), {ab, ar, a.relu ? 1 : 0});
  PlanKey key{x.device().index, kFusedForward, x.dtype(), std::move(geometry)};
  return cached_plan(std::move(key), [&] {
    const bool nhwc = channels_last(x);
    const cudnnDataType_t dt = cudnn_dtype(x.dtype());
    const int steps = (bias.defined() ? 1 : 0) + (residual.defined() ? 1 : 0) + (a.relu ? 1 : 0);
    int64_t next_virtual = kUidFirstVirtual;
    int done = 0;
    // The convolution and each step write a float virtual, the last one y itself.
    auto output_of_step = [&] {
      return ++done == steps + 1
                 ? tensor_spec(kUidY, y.shape(), dt, nhwc, graph::pointer_alignment(y.data_ptr()))
                 : tensor_spec(next_virtual++, y.shape(), CUDNN_DATA_FLOAT, nhwc, 16, /*is_virtual=*/true);
    };
    graph::Descriptor tx = tensor_spec(kUidX, x.shape(), dt, nhwc, graph::pointer_alignment(x.data_ptr()));
    graph::Descriptor tw = tensor_spec(kUidW, w.shape(), dt, nhwc, graph::pointer_alignment(w.data_ptr()));
    graph::Descriptor current = output_of_step();
    std::vector<graph::Descriptor> ops;
    ops.push_back(graph::conv_forward_op(convolution(a), tx, tw, current, CUDNN_DATA_FLOAT));
    auto then = [&](cudnnPointwiseMode_t mode, const graph::Descriptor* operand) {
      graph::Descriptor out = output_of_step();
      ops.push_back(graph::pointwise_op(mode, current, operand, out));
      current = std::move(out);
    };
    graph::Descriptor tb, tr;
    if (bias.defined()) {
      tb = tensor_spec(kUidBias, {1, y.size(1), 1, 1}, cudnn_dtype(bias.dtype()), nhwc, ab);
      then(CUDNN_POINTWISE_ADD, &tb);
    }
    if (residual.defined()) {
      tr = tensor_spec(kUidResidual, y.shape(), dt, nhwc, ar);
      then(CUDNN_POINTWISE_ADD, &tr);
    }
    if (a.relu) then(CUDNN_POINTWISE_RELU_FWD, nullptr);
    FusedBindings b = fused_bindings(x, w, y, bias, residual);
    const std::optional<graph::PlanTimer> timer =
        benchmark_timer(h, std::move(b.uids), std::move(b.data), 2, y.nbytes(), x.device());
    return graph::build_plan(h, std::move(ops), engine_filter(x.dtype(), true), "conv2d forward with its epilogue",
                             "convolution and one elementwise pass", timer_or_null(timer));
  });
}

}  // namespace

bool cudnn_benchmark_mode() {
  // The backend options' convolution benchmark, at every call (an atomic
  // load): plans key on it, so a change applies to the next plan made.
  return convolution_benchmark();
}

bool run_graph_pass(ConvPass pass, const Tensor& x, const Tensor& w, const Tensor& y, const Conv2dAttrs& a,
                    cudnnHandle_t h, bool accumulate) {
  if (!graph_path_wanted(x, w, y)) return false;
  std::shared_ptr<graph::ExecutionPlan> plan = pass_plan(pass, x, w, y, a, h, accumulate);
  if (!plan) return false;
  execute(*plan, h, {kUidX, kUidW, kUidY}, {x.data_ptr(), w.data_ptr(), y.data_ptr()}, y.device());
  return true;
}

bool run_fused_forward(const Tensor& x, const Tensor& w, const Tensor& y, const Tensor& bias, const Tensor& residual,
                       const Conv2dAttrs& a, cudnnHandle_t h) {
  if (!fusion_wanted() || !graph_path_wanted(x, w, y)) return false;
  // Without tensor cores (float32 with TF32 off) the engines that take the
  // fused graphs are slower than the convolution with one elementwise pass:
  // cuDNN's runtime-compiled one (from its fallback list, where heuristics
  // A has none) ran ResNet-50's evaluation at 324 img/s against 3,180
  // unfused on an H100, and VGG16's precompiled ones at 902 against 1,032
  // (bench/NOTES.md section 46).
  if (x.dtype() == DType::float32 && !tf32_allowed()) return false;
  if (residual.defined() && !dense_in(residual, channels_last(x))) return false;
  std::shared_ptr<graph::ExecutionPlan> plan = fused_forward_plan(x, w, y, bias, residual, a, h);
  if (!plan) return false;
  const FusedBindings b = fused_bindings(x, w, y, bias, residual);
  execute(*plan, h, b.uids, b.data, y.device());
  return true;
}

}  // namespace hearth::cuda
