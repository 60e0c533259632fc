// Can cuDNN compute a convolution's output and batch norm's training
// statistics (the per-channel sums of y and y * y over N, H, W) in one fused
// graph, and at what cost over the plain convolution? If so, batch norm's
// forward statistics pass (one more read of every convolution output) goes.
//
// For each of ResNet-50's training convolutions (batch 128, NHWC bf16) this
// builds, through hearth's graph-API builder:
//   A  the plain forward (the engines conv2d_plans.cu takes for it);
//   B  conv -> y plus sum(y) and sum(y * y) as reductions to [1, C, 1, 1]
//      float, reading the convolution's float output (B/f32) or y (B/y);
//   C  (when B fails) conv -> y plus the sum alone, to tell whether it is
//      the second reduction or reductions at all that fail;
//   D  conv -> y plus a statistics (GEN_STATS) operation, reading y (D/y) or
//      the float output (D/f32).
// It prints whether each plan was built (and where it failed otherwise), its
// engine, workspace and device time per execution, against the statistics
// pass it would replace (2 bytes per output element at 3 TB/s), and checks the
// sums against sums of the y each graph wrote. A table, no assertions.
//
//   bench_conv_stats_probe [--shapes N] [--iters N] [--all-graphs] [--no-verify] [--budget SECONDS] [--ops-only]
//
// Defaults: every shape, 50 timed runs, checks on, and no new shape started
// after 90 s (runtime-compiled engines take ~0.5 s or more each to plan).
// --all-graphs tries every variant (otherwise B/y, C and D/f32 only where the
// one before them fails); --ops-only only makes each variant's operations
// (no GPU needed: a check that cuDNN accepts the descriptors).
//
// HEARTH_CUDNN_LOG=1 adds the builder's line per plan (engine, runtime
// compilation, planning time); CUDNN_LOGLEVEL_DBG=2 CUDNN_LOGDEST_DBG=stderr
// adds cuDNN's own reasons for refusing a graph.
#include <cuda_runtime.h>
#include <cudnn.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "hearth/backends/cuda/cudnn_graph.h"
#include "hearth/core/switches.h"

namespace graph = hearth::cuda::cudnn_graph;

namespace {

using Clock = std::chrono::steady_clock;

double seconds_since(Clock::time_point t) { return std::chrono::duration<double>(Clock::now() - t).count(); }

#define PROBE_CUDA(expr)                                                                                 \
  do {                                                                                                   \
    cudaError_t e_ = (expr);                                                                             \
    if (e_ != cudaSuccess) throw std::runtime_error(std::string(#expr) + ": " + cudaGetErrorString(e_)); \
  } while (0)

constexpr int64_t kBatch = 128;

// One convolution of ResNet-50 (torchvision's v1.5: the stride in the 3x3),
// padding k / 2, and how many times a forward step runs it.
struct ConvShape {
  const char* name;
  int64_t cin, cout, h, k, stride, count;
  int64_t pad() const { return k / 2; }
  int64_t out() const { return (h + 2 * pad() - k) / stride + 1; }
  int64_t y_elements() const { return kBatch * cout * out() * out(); }
  int64_t x_elements() const { return kBatch * cin * h * h; }
  int64_t w_elements() const { return cout * cin * k * k; }
};

const std::vector<ConvShape>& resnet50_shapes() {
  static const std::vector<ConvShape> shapes = {
      {"stem 7x7 s2 3->64 @224", 3, 64, 224, 7, 2, 1},
      {"1x1 64->64 @56", 64, 64, 56, 1, 1, 1},
      {"3x3 64->64 @56", 64, 64, 56, 3, 1, 3},
      {"1x1 64->256 @56", 64, 256, 56, 1, 1, 4},
      {"1x1 256->64 @56", 256, 64, 56, 1, 1, 2},
      {"1x1 256->128 @56", 256, 128, 56, 1, 1, 1},
      {"3x3 s2 128->128 56->28", 128, 128, 56, 3, 2, 1},
      {"1x1 128->512 @28", 128, 512, 28, 1, 1, 4},
      {"1x1 512->128 @28", 512, 128, 28, 1, 1, 3},
      {"3x3 128->128 @28", 128, 128, 28, 3, 1, 3},
      {"1x1 512->256 @28", 512, 256, 28, 1, 1, 1},
      {"3x3 s2 256->256 28->14", 256, 256, 28, 3, 2, 1},
      {"1x1 256->1024 @14", 256, 1024, 14, 1, 1, 6},
      {"1x1 1024->256 @14", 1024, 256, 14, 1, 1, 5},
      {"3x3 256->256 @14", 256, 256, 14, 3, 1, 5},
      {"1x1 1024->512 @14", 1024, 512, 14, 1, 1, 1},
      {"3x3 s2 512->512 14->7", 512, 512, 14, 3, 2, 1},
      {"1x1 512->2048 @7", 512, 2048, 7, 1, 1, 3},
      {"1x1 2048->512 @7", 2048, 512, 7, 1, 1, 2},
      {"3x3 512->512 @7", 512, 512, 7, 3, 1, 2},
      {"ds 1x1 s2 256->512 56->28", 256, 512, 56, 1, 2, 1},
      {"ds 1x1 s2 512->1024 28->14", 512, 1024, 28, 1, 2, 1},
      {"ds 1x1 s2 1024->2048 14->7", 1024, 2048, 14, 1, 2, 1},
  };
  return shapes;
}

enum class Variant { plain, sums_f32, sums_y, sum_f32, sum_y, genstats_y, genstats_f32 };

const char* variant_name(Variant v) {
  switch (v) {
    case Variant::plain:
      return "A conv";
    case Variant::sums_f32:
      return "B conv+sum+sumsq (f32)";
    case Variant::sums_y:
      return "B conv+sum+sumsq (y)";
    case Variant::sum_f32:
      return "C conv+sum (f32)";
    case Variant::sum_y:
      return "C conv+sum (y)";
    case Variant::genstats_y:
      return "D conv+genstats (y)";
    case Variant::genstats_f32:
      return "D conv+genstats (f32)";
  }
  return "?";
}

bool has_sum(Variant v) { return v != Variant::plain; }
bool has_sqsum(Variant v) { return v != Variant::plain && v != Variant::sum_f32 && v != Variant::sum_y; }
bool reads_float(Variant v) { return v == Variant::sums_f32 || v == Variant::sum_f32 || v == Variant::genstats_f32; }

enum : int64_t { kUidX = 1, kUidW = 2, kUidY = 3, kUidSum = 4, kUidSqSum = 5, kUidVirtual = 100 };

// NHWC strides of an [N, C, H, W] tensor.
std::vector<int64_t> nhwc_strides(const std::vector<int64_t>& d) { return {d[1] * d[2] * d[3], 1, d[3] * d[1], d[1]}; }

graph::Descriptor tensor(int64_t uid, std::vector<int64_t> dims, cudnnDataType_t type, bool is_virtual = false) {
  graph::TensorSpec spec;
  spec.uid = uid;
  spec.dtype = type;
  spec.strides = nhwc_strides(dims);
  spec.dims = std::move(dims);
  spec.alignment = 16;
  spec.is_virtual = is_virtual;
  return graph::make_tensor(spec);
}

// The operations of one variant (throws DeviceError naming the operation cuDNN refused).
std::vector<graph::Descriptor> make_ops(Variant v, const ConvShape& s) {
  const int64_t o = s.out();
  const std::vector<int64_t> ydims{kBatch, s.cout, o, o}, cdims{1, s.cout, 1, 1};
  graph::Descriptor tx = tensor(kUidX, {kBatch, s.cin, s.h, s.h}, CUDNN_DATA_BFLOAT16);
  graph::Descriptor tw = tensor(kUidW, {s.cout, s.cin, s.k, s.k}, CUDNN_DATA_BFLOAT16);
  graph::Descriptor ty = tensor(kUidY, ydims, CUDNN_DATA_BFLOAT16);
  graph::Descriptor conv =
      graph::make_convolution(graph::ConvGeometry{{s.pad(), s.pad()}, {s.stride, s.stride}, {1, 1}, CUDNN_DATA_FLOAT});
  std::vector<graph::Descriptor> ops;
  if (!reads_float(v)) {
    ops.push_back(graph::conv_forward_op(conv, tx, tw, ty, CUDNN_DATA_FLOAT));
    if (v == Variant::plain) return ops;
  }
  // The tensor the statistics read: y itself, or the convolution's float output
  // (a virtual tensor that an identity rounds into y).
  graph::Descriptor tf = tensor(kUidVirtual, ydims, CUDNN_DATA_FLOAT, /*is_virtual=*/true);
  if (reads_float(v)) {
    ops.push_back(graph::conv_forward_op(conv, tx, tw, tf, CUDNN_DATA_FLOAT));
    ops.push_back(graph::pointwise_op(CUDNN_POINTWISE_IDENTITY, tf, nullptr, ty));
  }
  const graph::Descriptor& src = reads_float(v) ? tf : ty;
  graph::Descriptor tsum = tensor(kUidSum, cdims, CUDNN_DATA_FLOAT);
  graph::Descriptor tsq = tensor(kUidSqSum, cdims, CUDNN_DATA_FLOAT);
  if (v == Variant::genstats_y || v == Variant::genstats_f32) {
    ops.push_back(graph::genstats_op(src, tsum, tsq));
    return ops;
  }
  ops.push_back(graph::reduction_op(CUDNN_REDUCE_TENSOR_ADD, src, tsum));
  if (has_sqsum(v)) {
    graph::Descriptor tsquare = tensor(kUidVirtual + 1, ydims, CUDNN_DATA_FLOAT, /*is_virtual=*/true);
    ops.push_back(graph::pointwise_op(CUDNN_POINTWISE_MUL, src, &src, tsquare));
    ops.push_back(graph::reduction_op(CUDNN_REDUCE_TENSOR_ADD, tsquare, tsq));
  }
  return ops;
}

graph::EngineFilter filter_for(Variant v) {
  graph::EngineFilter f;  // bf16: tensor cores allowed, no down-conversion, 2 GiB of workspace
  f.allow_runtime_compiled = v != Variant::plain;
  return f;
}

std::string last_cudnn_error() {
  char message[1024] = {0};
  cudnnGetLastErrorString(message, sizeof(message));
  std::string s(message);
  for (char& c : s)
    if (c == '\n') c = ' ';
  if (s.size() > 240) s = s.substr(0, 240) + "...";
  return s;
}

// Where building failed, when build_plan gave nothing: the operation graph's
// finalize, the heuristics, or each proposed configuration's plan (the first few).
std::string diagnose(cudnnHandle_t handle, std::vector<graph::Descriptor> ops) {
  graph::Descriptor g(CUDNN_BACKEND_OPERATIONGRAPH_DESCRIPTOR);
  std::vector<cudnnBackendDescriptor_t> raw;
  for (const auto& op : ops) raw.push_back(op.get());
  g.set(CUDNN_ATTR_OPERATIONGRAPH_HANDLE, CUDNN_TYPE_HANDLE, 1, &handle, "diagnosis");
  g.set(CUDNN_ATTR_OPERATIONGRAPH_OPS, CUDNN_TYPE_BACKEND_DESCRIPTOR, static_cast<int64_t>(raw.size()), raw.data(),
        "diagnosis");
  if (cudnnStatus_t st = g.try_finalize(); st != CUDNN_STATUS_SUCCESS)
    return std::string("operation graph finalize: ") + cudnnGetErrorString(st) + " [" + last_cudnn_error() + "]";
  std::string out;
  for (cudnnBackendHeurMode_t mode : {CUDNN_HEUR_MODE_A, CUDNN_HEUR_MODE_FALLBACK}) {
    const char* mode_name = mode == CUDNN_HEUR_MODE_A ? "heur A" : "heur fallback";
    graph::Descriptor heur(CUDNN_BACKEND_ENGINEHEUR_DESCRIPTOR);
    heur.set(CUDNN_ATTR_ENGINEHEUR_OPERATION_GRAPH, g, "diagnosis");
    heur.set(CUDNN_ATTR_ENGINEHEUR_MODE, CUDNN_TYPE_HEUR_MODE, 1, &mode, "diagnosis");
    if (cudnnStatus_t st = heur.try_finalize(); st != CUDNN_STATUS_SUCCESS) {
      out += std::string(mode_name) + " finalize: " + cudnnGetErrorString(st) + "; ";
      continue;
    }
    int64_t count = 0;
    cudnnBackendGetAttribute(heur.get(), CUDNN_ATTR_ENGINEHEUR_RESULTS, CUDNN_TYPE_BACKEND_DESCRIPTOR, 0, &count,
                             nullptr);
    out += std::string(mode_name) + ": " + std::to_string(count) + " configs";
    if (count <= 0) {
      out += "; ";
      continue;
    }
    std::vector<graph::Descriptor> cfgs;
    for (int64_t i = 0; i < count; ++i) cfgs.emplace_back(CUDNN_BACKEND_ENGINECFG_DESCRIPTOR);
    std::vector<cudnnBackendDescriptor_t> cfg_raw;
    for (auto& c : cfgs) cfg_raw.push_back(c.get());
    int64_t got = 0;
    cudnnBackendGetAttribute(heur.get(), CUDNN_ATTR_ENGINEHEUR_RESULTS, CUDNN_TYPE_BACKEND_DESCRIPTOR, count, &got,
                             cfg_raw.data());
    const int64_t tried = std::min<int64_t>(std::min(got, count), 3);
    for (int64_t i = 0; i < tried; ++i) {
      graph::Descriptor engine(CUDNN_BACKEND_ENGINE_DESCRIPTOR);
      cudnnBackendDescriptor_t e = engine.get();
      int64_t n = 0, index = -1;
      if (cudnnBackendGetAttribute(cfg_raw[i], CUDNN_ATTR_ENGINECFG_ENGINE, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &n, &e) ==
          CUDNN_STATUS_SUCCESS)
        cudnnBackendGetAttribute(e, CUDNN_ATTR_ENGINE_GLOBAL_INDEX, CUDNN_TYPE_INT64, 1, &n, &index);
      graph::Descriptor plan(CUDNN_BACKEND_EXECUTION_PLAN_DESCRIPTOR);
      plan.set(CUDNN_ATTR_EXECUTION_PLAN_HANDLE, CUDNN_TYPE_HANDLE, 1, &handle, "diagnosis");
      plan.set(CUDNN_ATTR_EXECUTION_PLAN_ENGINE_CONFIG, cfgs[static_cast<size_t>(i)], "diagnosis");
      const cudnnStatus_t st = plan.try_finalize();
      out += ", eng" + std::to_string(index) + " plan " +
             (st == CUDNN_STATUS_SUCCESS ? std::string("OK (filtered out)") : cudnnGetErrorString(st));
    }
    out += "; ";
  }
  const std::string last = last_cudnn_error();
  if (!last.empty()) out += "[" + last + "]";
  return out;
}

// Deterministic pseudo-random numbers in [0, 1).
struct Rng {
  uint64_t s;
  float next() {
    s ^= s << 13;
    s ^= s >> 7;
    s ^= s << 17;
    return static_cast<float>((s >> 40) & 0xFFFFFF) / 16777216.0f;
  }
};

uint16_t to_bf16(float f) {
  uint32_t u;
  std::memcpy(&u, &f, 4);
  u += 0x7FFF + ((u >> 16) & 1);  // round to nearest even (no NaNs here)
  return static_cast<uint16_t>(u >> 16);
}

float from_bf16(uint16_t h) {
  const uint32_t u = static_cast<uint32_t>(h) << 16;
  float f;
  std::memcpy(&f, &u, 4);
  return f;
}

// Fills n bf16 values on the device from a host pool of values in [lo, hi).
void fill_device(void* dst, int64_t n, float lo, float hi, uint64_t seed) {
  constexpr int64_t kPool = int64_t(1) << 22;
  std::vector<uint16_t> pool(static_cast<size_t>(std::min(n, kPool)));
  Rng rng{seed * 0x9E3779B97F4A7C15ull + 1};
  for (auto& v : pool) v = to_bf16(lo + (hi - lo) * rng.next());
  auto* d = static_cast<uint16_t*>(dst);
  for (int64_t at = 0; at < n; at += kPool) {
    const int64_t len = std::min(kPool, n - at);
    PROBE_CUDA(cudaMemcpy(d + at, pool.data(), static_cast<size_t>(len) * 2, cudaMemcpyHostToDevice));
  }
}

struct DeviceBuffer {
  void* p = nullptr;
  explicit DeviceBuffer(size_t bytes) {
    if (bytes) PROBE_CUDA(cudaMalloc(&p, bytes));
  }
  ~DeviceBuffer() {
    if (p) cudaFree(p);
  }
  DeviceBuffer(const DeviceBuffer&) = delete;
  DeviceBuffer& operator=(const DeviceBuffer&) = delete;
};

void hold_stream(void* ms) {
  std::this_thread::sleep_for(std::chrono::duration<double, std::milli>(*static_cast<double*>(ms)));
}

struct Timing {
  double us = 0;
  bool host_bound = false;  // the host took longer to enqueue the runs than the stream was held
};

// Mean device time per execution: the stream is held by a host function while
// the runs are enqueued behind it, so the events time the device alone.
Timing time_plan(const graph::ExecutionPlan& plan, cudnnHandle_t handle, cudaStream_t stream,
                 const std::vector<int64_t>& uids, const std::vector<void*>& data, void* ws, int iters) {
  for (int i = 0; i < 3; ++i) plan.execute(handle, uids, data, ws);
  PROBE_CUDA(cudaStreamSynchronize(stream));
  static double hold_ms = 0;
  hold_ms = 5.0 + 0.2 * iters;
  cudaEvent_t start, stop;
  PROBE_CUDA(cudaEventCreate(&start));
  PROBE_CUDA(cudaEventCreate(&stop));
  PROBE_CUDA(cudaLaunchHostFunc(stream, hold_stream, &hold_ms));
  const auto t0 = Clock::now();
  PROBE_CUDA(cudaEventRecord(start, stream));
  for (int i = 0; i < iters; ++i) plan.execute(handle, uids, data, ws);
  PROBE_CUDA(cudaEventRecord(stop, stream));
  const double host_ms = seconds_since(t0) * 1e3;
  PROBE_CUDA(cudaEventSynchronize(stop));
  float ms = 0;
  PROBE_CUDA(cudaEventElapsedTime(&ms, start, stop));
  cudaEventDestroy(start);
  cudaEventDestroy(stop);
  return Timing{1e3 * ms / iters, host_ms > hold_ms};
}

std::vector<uint16_t> copy_y(const void* y, int64_t n) {
  std::vector<uint16_t> h(static_cast<size_t>(n));
  PROBE_CUDA(cudaMemcpy(h.data(), y, static_cast<size_t>(n) * 2, cudaMemcpyDeviceToHost));
  return h;
}

std::vector<float> copy_floats(const void* p, int64_t n) {
  std::vector<float> h(static_cast<size_t>(n));
  PROBE_CUDA(cudaMemcpy(h.data(), p, static_cast<size_t>(n) * 4, cudaMemcpyDeviceToHost));
  return h;
}

struct Options {
  size_t shapes = 0;  // 0: all
  int iters = 50;
  bool all_graphs = false, verify = true, ops_only = false;
  double budget_s = 90;
};

struct Result {
  bool built = false;
  double us = 0;
};

struct Probe {
  cudnnHandle_t handle;
  cudaStream_t stream;
  const Options& opt;
  const ConvShape& s;
  void *x, *w, *y, *sum, *sqsum;
  std::vector<uint16_t> y_plain;  // A's y (when verifying)

  Result run(Variant v) {
    Result r;
    std::printf("   %-24s ", variant_name(v));
    std::fflush(stdout);
    std::vector<graph::Descriptor> ops;
    try {
      ops = make_ops(v, s);
    } catch (const std::exception& e) {
      std::printf("no plan: an operation does not finalize: %s [%s]\n", e.what(), last_cudnn_error().c_str());
      return r;
    }
    const auto t0 = Clock::now();
    std::shared_ptr<graph::ExecutionPlan> plan;
    try {
      plan = graph::build_plan(handle, std::move(ops), filter_for(v), variant_name(v), "nothing");
    } catch (const std::exception& e) {
      std::printf("no plan: %s\n", e.what());
      return r;
    }
    const double plan_s = seconds_since(t0);
    if (!plan) {
      std::string why;
      try {
        why = diagnose(handle, make_ops(v, s));
      } catch (const std::exception& e) {
        why = e.what();
      }
      std::printf("no plan (%.2f s): %s\n", plan_s, why.c_str());
      return r;
    }
    try {
      DeviceBuffer ws(static_cast<size_t>(plan->workspace_bytes()));
      std::vector<int64_t> uids{kUidX, kUidW, kUidY};
      std::vector<void*> data{x, w, y};
      if (has_sum(v)) {
        uids.push_back(kUidSum);
        data.push_back(sum);
      }
      if (has_sqsum(v)) {
        uids.push_back(kUidSqSum);
        data.push_back(sqsum);
      }
      const Timing t = time_plan(*plan, handle, stream, uids, data, ws.p, opt.iters);
      r.built = true;
      r.us = t.us;
      std::printf("engine %3lld  ws %7.2f MB  plan %5.2f s  %8.1f us%s", static_cast<long long>(plan->engine_index()),
                  plan->workspace_bytes() / 1e6, plan_s, t.us, t.host_bound ? " (host-bound)" : "");
      if (opt.verify) check(*plan, v, uids, data, ws.p);
      std::printf("\n");
    } catch (const std::exception& e) {
      std::printf("failed to run: %s\n", e.what());
      r.built = false;
    }
    return r;
  }

  // The sums against the sums of the y the graph wrote; y against A's; and
  // whether a second run overwrites the sums or adds to them.
  void check(const graph::ExecutionPlan& plan, Variant v, const std::vector<int64_t>& uids,
             const std::vector<void*>& data, void* ws) {
    const int64_t n = s.y_elements(), c = s.cout;
    if (v == Variant::plain) {
      y_plain = copy_y(y, n);
      return;
    }
    PROBE_CUDA(cudaMemsetAsync(sum, 0, static_cast<size_t>(c) * 4, stream));
    PROBE_CUDA(cudaMemsetAsync(sqsum, 0, static_cast<size_t>(c) * 4, stream));
    plan.execute(handle, uids, data, ws);
    PROBE_CUDA(cudaStreamSynchronize(stream));
    const std::vector<float> s1 = copy_floats(sum, c), q1 = copy_floats(sqsum, c);
    plan.execute(handle, uids, data, ws);
    PROBE_CUDA(cudaStreamSynchronize(stream));
    const std::vector<float> s2 = copy_floats(sum, c), q2 = copy_floats(sqsum, c);
    const std::vector<uint16_t> yh = copy_y(y, n);
    std::vector<double> ref_s(static_cast<size_t>(c), 0), ref_q(static_cast<size_t>(c), 0),
        ref_abs(static_cast<size_t>(c), 0);
    for (int64_t at = 0; at < n; at += c) {  // NHWC: the channel is the fastest index
      for (int64_t ch = 0; ch < c; ++ch) {
        const double val = from_bf16(yh[static_cast<size_t>(at + ch)]);
        ref_s[static_cast<size_t>(ch)] += val;
        ref_q[static_cast<size_t>(ch)] += val * val;
        ref_abs[static_cast<size_t>(ch)] += std::fabs(val);
      }
    }
    double err_s = 0, err_q = 0;
    int overwrite = 0, accumulate = 0;
    for (size_t ch = 0; ch < static_cast<size_t>(c); ++ch) {
      err_s = std::max(err_s, std::fabs(s1[ch] - ref_s[ch]) / std::max(ref_abs[ch], 1e-30));
      if (has_sqsum(v)) err_q = std::max(err_q, std::fabs(q1[ch] - ref_q[ch]) / std::max(ref_q[ch], 1e-30));
      const double a = has_sqsum(v) ? q1[ch] : s1[ch], b = has_sqsum(v) ? q2[ch] : s2[ch];
      if (std::fabs(b - a) <= 1e-3 * std::fabs(a))
        ++overwrite;
      else if (std::fabs(b - 2 * a) <= 1e-3 * std::fabs(a))
        ++accumulate;
    }
    std::printf("\n      check: sum err %.1e (of sum|y|)", err_s);
    if (has_sqsum(v)) std::printf(", sumsq rel err %.1e", err_q);
    std::printf(", second run %s", overwrite == c    ? "overwrites"
                                   : accumulate == c ? "adds (needs zeroed sums)"
                                                     : "neither");
    if (overwrite != c && accumulate != c)
      std::printf(" (%d/%lld overwrite, %d add)", overwrite, static_cast<long long>(c), accumulate);
    if (!y_plain.empty()) {
      double diff = 0, peak = 0;
      for (size_t i = 0; i < yh.size(); ++i) {
        const double a = from_bf16(y_plain[i]), b = from_bf16(yh[i]);
        diff = std::max(diff, std::fabs(a - b));
        peak = std::max(peak, std::fabs(a));
      }
      std::printf(", y vs A: max diff %.1e of max|y| %.2f", diff, peak);
    }
  }
};

int usage(const char* prog) {
  std::fprintf(stderr,
               "usage: %s [--shapes N] [--iters N] [--all-graphs] [--no-verify] [--budget SECONDS] [--ops-only]\n",
               prog);
  return 2;
}

}  // namespace

int main(int argc, char** argv) {
  hearth::validate_switches_or_exit("conv_stats_probe");  // a bad HEARTH_* value: one line, status 2
  Options opt;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "--shapes" && i + 1 < argc)
      opt.shapes = static_cast<size_t>(std::atoi(argv[++i]));
    else if (a == "--iters" && i + 1 < argc)
      opt.iters = std::max(1, std::atoi(argv[++i]));
    else if (a == "--budget" && i + 1 < argc)
      opt.budget_s = std::atof(argv[++i]);
    else if (a == "--all-graphs")
      opt.all_graphs = true;
    else if (a == "--no-verify")
      opt.verify = false;
    else if (a == "--ops-only")
      opt.ops_only = true;
    else
      return usage(argv[0]);
  }
  const auto start = Clock::now();
  if (opt.ops_only) {  // whether each variant's operations finalize (needs no GPU)
    const auto& shapes = resnet50_shapes();
    const size_t count = opt.shapes ? std::min(opt.shapes, shapes.size()) : shapes.size();
    for (size_t i = 0; i < count; ++i)
      for (Variant v : {Variant::plain, Variant::sums_f32, Variant::sums_y, Variant::sum_f32, Variant::sum_y,
                        Variant::genstats_y, Variant::genstats_f32}) {
        try {
          std::printf("[%zu] %-28s %-24s %zu operations\n", i, shapes[i].name, variant_name(v),
                      make_ops(v, shapes[i]).size());
        } catch (const std::exception& e) {
          std::printf("[%zu] %-28s %-24s %s [%s]\n", i, shapes[i].name, variant_name(v), e.what(),
                      last_cudnn_error().c_str());
        }
      }
    return 0;
  }
  try {
    cudaDeviceProp prop{};
    PROBE_CUDA(cudaGetDeviceProperties(&prop, 0));
    int runtime = 0;
    cudaRuntimeGetVersion(&runtime);
    std::printf("conv + batch-norm statistics in one cuDNN graph: %s (sm_%d%d), cuDNN %zu, CUDA runtime %d\n",
                prop.name, prop.major, prop.minor, cudnnGetVersion(), runtime);
    std::printf(
        "batch %lld, NHWC bf16, float32 compute; %d timed runs per graph; stats pass = 2 bytes x |y| at 3 TB/s\n\n",
        static_cast<long long>(kBatch), opt.iters);
    cudnnHandle_t handle;
    if (cudnnStatus_t st = cudnnCreate(&handle); st != CUDNN_STATUS_SUCCESS) {
      std::printf("cudnnCreate failed: %s\n", cudnnGetErrorString(st));
      return 1;
    }
    cudaStream_t stream;
    PROBE_CUDA(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
    cudnnSetStream(handle, stream);

    const auto& shapes = resnet50_shapes();
    const size_t count = opt.shapes ? std::min(opt.shapes, shapes.size()) : shapes.size();
    // Per forward step (each shape times its count in ResNet-50): A, the best
    // statistics graph, and the statistics passes it would replace.
    double step_a = 0, step_fused = 0, step_stats = 0, step_a_covered = 0;
    int fused_shapes = 0, measured_shapes = 0;
    for (size_t i = 0; i < count; ++i) {
      const ConvShape& s = shapes[i];
      if (seconds_since(start) > opt.budget_s) {
        std::printf("[%zu] %s: skipped, past the %.0f s budget\n", i, s.name, opt.budget_s);
        continue;
      }
      const double stats_us = 2.0 * static_cast<double>(s.y_elements()) / 3.0e12 * 1e6;
      std::printf("[%zu] %s  (x%lld per step; y %lldx%lldx%lldx%lld = %.1fM; stats pass at 3 TB/s: %.1f us)\n", i,
                  s.name, static_cast<long long>(s.count), static_cast<long long>(kBatch),
                  static_cast<long long>(s.cout), static_cast<long long>(s.out()), static_cast<long long>(s.out()),
                  s.y_elements() / 1e6, stats_us);
      try {
        DeviceBuffer x(static_cast<size_t>(s.x_elements()) * 2), w(static_cast<size_t>(s.w_elements()) * 2),
            y(static_cast<size_t>(s.y_elements()) * 2), sum(static_cast<size_t>(s.cout) * 4),
            sqsum(static_cast<size_t>(s.cout) * 4);
        // x in [0, 1) like a ReLU's output; w with variance 1 / fan-in.
        const float a = std::sqrt(3.0f / static_cast<float>(s.cin * s.k * s.k));
        fill_device(x.p, s.x_elements(), 0.0f, 1.0f, 2 * i + 1);
        fill_device(w.p, s.w_elements(), -a, a, 2 * i + 2);
        PROBE_CUDA(cudaMemset(y.p, 0, static_cast<size_t>(s.y_elements()) * 2));
        Probe probe{handle, stream, opt, s, x.p, w.p, y.p, sum.p, sqsum.p, {}};
        const Result plain = probe.run(Variant::plain);
        double best = 0;
        auto consider = [&](const Result& r) {
          if (r.built && (best == 0 || r.us < best)) best = r.us;
          return r.built;
        };
        bool b_ok = consider(probe.run(Variant::sums_f32));
        if (!b_ok || opt.all_graphs) b_ok = consider(probe.run(Variant::sums_y)) || b_ok;
        if (!b_ok || opt.all_graphs) {
          const bool c_ok = probe.run(Variant::sum_f32).built;
          if (!c_ok || opt.all_graphs) probe.run(Variant::sum_y);
        }
        bool d_ok = consider(probe.run(Variant::genstats_y));
        if (!d_ok || opt.all_graphs) consider(probe.run(Variant::genstats_f32));
        if (plain.built) {
          ++measured_shapes;
          step_a += s.count * plain.us;
          step_stats += s.count * stats_us;
          if (best > 0) {
            ++fused_shapes;
            step_a_covered += s.count * plain.us;
            step_fused += s.count * best;
            std::printf(
                "   => best statistics graph %.1f us = A %+.1f us; the stats pass it replaces %.1f us; net %+.1f us\n",
                best, best - plain.us, stats_us, stats_us - (best - plain.us));
          }
        }
      } catch (const std::exception& e) {
        std::printf("   shape failed: %s\n", e.what());
      }
      std::printf("\n");
    }
    std::printf(
        "per forward step (each shape x its count; %d of %zu shapes with a plan A, %d with a statistics graph):\n",
        measured_shapes, count, fused_shapes);
    std::printf("  A convolutions                      %8.1f us\n", step_a);
    std::printf("  stats passes at 3 TB/s (all A's)    %8.1f us\n", step_stats);
    if (fused_shapes) {
      std::printf("  A over the shapes with stats graph  %8.1f us\n", step_a_covered);
      std::printf("  best statistics graphs              %8.1f us (%+.1f us over their A)\n", step_fused,
                  step_fused - step_a_covered);
    }
    std::printf("total %.1f s\n", seconds_since(start));
    cudaStreamDestroy(stream);
    cudnnDestroy(handle);
  } catch (const std::exception& e) {
    std::printf("failed: %s\n", e.what());
    return 1;
  }
  return 0;
}
