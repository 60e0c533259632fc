#include <algorithm>
#include <chrono>
#include <cstdio>
#include <string>

#include "hearth/backends/cuda/cuda_check.h"
#include "hearth/backends/cuda/cuda_switches.h"
#include "hearth/backends/cuda/cudnn_graph.h"

namespace hearth::cuda::cudnn_graph {

namespace {

void check(cudnnStatus_t st, const char* call, const char* what) {
  if (st != CUDNN_STATUS_SUCCESS)
    HEARTH_THROW(DeviceError, "[cudnn] ", call, " failed for ", what, ": ", cudnnGetErrorString(st));
}

// Alpha and beta go in the compute type's width: double for double, else float.
struct Scale {
  float f;
  double d;
  explicit Scale(double v) : f(static_cast<float>(v)), d(v) {}
  cudnnBackendAttributeType_t type(cudnnDataType_t compute) const {
    return compute == CUDNN_DATA_DOUBLE ? CUDNN_TYPE_DOUBLE : CUDNN_TYPE_FLOAT;
  }
  const void* ptr(cudnnDataType_t compute) const {
    return compute == CUDNN_DATA_DOUBLE ? static_cast<const void*>(&d) : &f;
  }
};

// out = alpha * op(...) + beta * out with alpha = 1; beta is 0 (out
// overwritten) or 1 (added into).
template <typename Attr>
Descriptor conv_op(cudnnBackendDescriptorType_t type, Attr alpha, Attr beta, Attr conv_desc,
                   std::initializer_list<std::pair<Attr, const Descriptor*>> tensors, const Descriptor& conv,
                   cudnnDataType_t compute, const char* what, double beta_value = 0.0) {
  Descriptor op(type);
  const Scale one(1.0), b(beta_value);
  op.set(alpha, one.type(compute), 1, one.ptr(compute), what);
  op.set(beta, b.type(compute), 1, b.ptr(compute), what);
  op.set(conv_desc, conv, what);
  for (const auto& [name, t] : tensors) op.set(name, *t, what);
  op.finalize(what);
  return op;
}

// The notes cuDNN attaches to an engine, read off the configuration.
struct EngineNotes {
  int64_t index = -1;
  bool tensor_core = false, down_convert = false, runtime_compiled = false;
};

EngineNotes read_notes(cudnnBackendDescriptor_t cfg) {
  EngineNotes n;
  Descriptor engine(CUDNN_BACKEND_ENGINE_DESCRIPTOR);
  cudnnBackendDescriptor_t e = engine.get();
  int64_t count = 0;
  if (cudnnBackendGetAttribute(cfg, CUDNN_ATTR_ENGINECFG_ENGINE, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &count, &e) !=
      CUDNN_STATUS_SUCCESS)
    return n;
  cudnnBackendGetAttribute(e, CUDNN_ATTR_ENGINE_GLOBAL_INDEX, CUDNN_TYPE_INT64, 1, &count, &n.index);
  cudnnBackendNumericalNote_t numerical[CUDNN_NUMERICAL_NOTE_TYPE_COUNT];
  if (cudnnBackendGetAttribute(e, CUDNN_ATTR_ENGINE_NUMERICAL_NOTE, CUDNN_TYPE_NUMERICAL_NOTE,
                               CUDNN_NUMERICAL_NOTE_TYPE_COUNT, &count, numerical) == CUDNN_STATUS_SUCCESS) {
    for (int64_t i = 0; i < count; ++i) {
      n.tensor_core |= numerical[i] == CUDNN_NUMERICAL_NOTE_TENSOR_CORE;
      n.down_convert |= numerical[i] == CUDNN_NUMERICAL_NOTE_DOWN_CONVERT_INPUTS;
    }
  }
  cudnnBackendBehaviorNote_t behavior[CUDNN_BEHAVIOR_NOTE_TYPE_COUNT];
  if (cudnnBackendGetAttribute(e, CUDNN_ATTR_ENGINE_BEHAVIOR_NOTE, CUDNN_TYPE_BEHAVIOR_NOTE,
                               CUDNN_BEHAVIOR_NOTE_TYPE_COUNT, &count, behavior) == CUDNN_STATUS_SUCCESS) {
    for (int64_t i = 0; i < count; ++i) n.runtime_compiled |= behavior[i] == CUDNN_BEHAVIOR_NOTE_RUNTIME_COMPILATION;
  }
  return n;
}

bool passes(const EngineNotes& n, const EngineFilter& f) {
  if (n.tensor_core && !f.allow_tensor_core) return false;
  if (n.down_convert && !f.allow_down_convert) return false;
  if (n.runtime_compiled && !f.allow_runtime_compiled) return false;
  return true;
}

// The engine configurations the heuristics of one mode propose, best first.
std::vector<Descriptor> heuristic_configs(const Descriptor& graph, cudnnBackendHeurMode_t mode) {
  std::vector<Descriptor> out;
  Descriptor heur(CUDNN_BACKEND_ENGINEHEUR_DESCRIPTOR);
  heur.set(CUDNN_ATTR_ENGINEHEUR_OPERATION_GRAPH, graph, "engine heuristics");
  heur.set(CUDNN_ATTR_ENGINEHEUR_MODE, CUDNN_TYPE_HEUR_MODE, 1, &mode, "engine heuristics");
  if (heur.try_finalize() != CUDNN_STATUS_SUCCESS) return out;
  int64_t count = 0;
  if (cudnnBackendGetAttribute(heur.get(), CUDNN_ATTR_ENGINEHEUR_RESULTS, CUDNN_TYPE_BACKEND_DESCRIPTOR, 0, &count,
                               nullptr) != CUDNN_STATUS_SUCCESS ||
      count <= 0)
    return out;
  for (int64_t i = 0; i < count; ++i) out.emplace_back(CUDNN_BACKEND_ENGINECFG_DESCRIPTOR);
  std::vector<cudnnBackendDescriptor_t> raw;
  for (auto& d : out) raw.push_back(d.get());
  int64_t got = 0;
  if (cudnnBackendGetAttribute(heur.get(), CUDNN_ATTR_ENGINEHEUR_RESULTS, CUDNN_TYPE_BACKEND_DESCRIPTOR, count, &got,
                               raw.data()) != CUDNN_STATUS_SUCCESS)
    return {};
  out.resize(static_cast<size_t>(std::min(got, count)));
  return out;
}

}  // namespace

Descriptor::Descriptor(cudnnBackendDescriptorType_t type) {
  check(cudnnBackendCreateDescriptor(type, &d_), "cudnnBackendCreateDescriptor", "a graph descriptor");
}

Descriptor::~Descriptor() {
  if (d_) cudnnBackendDestroyDescriptor(d_);
}

Descriptor& Descriptor::operator=(Descriptor&& o) noexcept {
  if (this != &o) {
    if (d_) cudnnBackendDestroyDescriptor(d_);
    d_ = std::exchange(o.d_, nullptr);
  }
  return *this;
}

void Descriptor::set(cudnnBackendAttributeName_t name, cudnnBackendAttributeType_t type, int64_t count,
                     const void* values, const char* what) {
  check(cudnnBackendSetAttribute(d_, name, type, count, values), "cudnnBackendSetAttribute", what);
}

void Descriptor::set(cudnnBackendAttributeName_t name, const Descriptor& d, const char* what) {
  cudnnBackendDescriptor_t raw = d.get();
  set(name, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &raw, what);
}

cudnnStatus_t Descriptor::try_finalize() { return cudnnBackendFinalize(d_); }

void Descriptor::finalize(const char* what) { check(try_finalize(), "cudnnBackendFinalize", what); }

Descriptor make_tensor(const TensorSpec& t) {
  Descriptor d(CUDNN_BACKEND_TENSOR_DESCRIPTOR);
  const char* what = "a tensor descriptor";
  d.set(CUDNN_ATTR_TENSOR_DATA_TYPE, CUDNN_TYPE_DATA_TYPE, 1, &t.dtype, what);
  d.set(CUDNN_ATTR_TENSOR_DIMENSIONS, CUDNN_TYPE_INT64, static_cast<int64_t>(t.dims.size()), t.dims.data(), what);
  d.set(CUDNN_ATTR_TENSOR_STRIDES, CUDNN_TYPE_INT64, static_cast<int64_t>(t.strides.size()), t.strides.data(), what);
  d.set(CUDNN_ATTR_TENSOR_UNIQUE_ID, CUDNN_TYPE_INT64, 1, &t.uid, what);
  d.set(CUDNN_ATTR_TENSOR_BYTE_ALIGNMENT, CUDNN_TYPE_INT64, 1, &t.alignment, what);
  const bool is_virtual = t.is_virtual;
  d.set(CUDNN_ATTR_TENSOR_IS_VIRTUAL, CUDNN_TYPE_BOOLEAN, 1, &is_virtual, what);
  if (t.by_value) {
    const bool by_value = true;
    d.set(CUDNN_ATTR_TENSOR_IS_BY_VALUE, CUDNN_TYPE_BOOLEAN, 1, &by_value, what);
  }
  d.finalize(what);
  return d;
}

Descriptor make_convolution(const ConvGeometry& g) {
  Descriptor d(CUDNN_BACKEND_CONVOLUTION_DESCRIPTOR);
  const char* what = "a convolution descriptor";
  const int64_t dims = static_cast<int64_t>(g.padding.size());
  const cudnnConvolutionMode_t mode = CUDNN_CROSS_CORRELATION;
  d.set(CUDNN_ATTR_CONVOLUTION_COMP_TYPE, CUDNN_TYPE_DATA_TYPE, 1, &g.compute, what);
  d.set(CUDNN_ATTR_CONVOLUTION_CONV_MODE, CUDNN_TYPE_CONVOLUTION_MODE, 1, &mode, what);
  d.set(CUDNN_ATTR_CONVOLUTION_SPATIAL_DIMS, CUDNN_TYPE_INT64, 1, &dims, what);
  d.set(CUDNN_ATTR_CONVOLUTION_PRE_PADDINGS, CUDNN_TYPE_INT64, dims, g.padding.data(), what);
  d.set(CUDNN_ATTR_CONVOLUTION_POST_PADDINGS, CUDNN_TYPE_INT64, dims, g.padding.data(), what);
  d.set(CUDNN_ATTR_CONVOLUTION_FILTER_STRIDES, CUDNN_TYPE_INT64, dims, g.stride.data(), what);
  d.set(CUDNN_ATTR_CONVOLUTION_DILATIONS, CUDNN_TYPE_INT64, dims, g.dilation.data(), what);
  d.finalize(what);
  return d;
}

Descriptor conv_forward_op(const Descriptor& conv, const Descriptor& x, const Descriptor& w, const Descriptor& y,
                           cudnnDataType_t compute) {
  return conv_op(CUDNN_BACKEND_OPERATION_CONVOLUTION_FORWARD_DESCRIPTOR, CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_ALPHA,
                 CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_BETA, CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_CONV_DESC,
                 {{CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_X, &x},
                  {CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_W, &w},
                  {CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_Y, &y}},
                 conv, compute, "a convolution forward operation");
}

Descriptor conv_backward_data_op(const Descriptor& conv, const Descriptor& dy, const Descriptor& w,
                                 const Descriptor& dx, cudnnDataType_t compute, double beta) {
  return conv_op(
      CUDNN_BACKEND_OPERATION_CONVOLUTION_BACKWARD_DATA_DESCRIPTOR, CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_DATA_ALPHA,
      CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_DATA_BETA, CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_DATA_CONV_DESC,
      {{CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_DATA_DY, &dy},
       {CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_DATA_W, &w},
       {CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_DATA_DX, &dx}},
      conv, compute,
      beta != 0.0 ? "a convolution backward-data operation adding into dx" : "a convolution backward-data operation",
      beta);
}

Descriptor conv_backward_filter_op(const Descriptor& conv, const Descriptor& x, const Descriptor& dy,
                                   const Descriptor& dw, cudnnDataType_t compute) {
  return conv_op(CUDNN_BACKEND_OPERATION_CONVOLUTION_BACKWARD_FILTER_DESCRIPTOR,
                 CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_FILTER_ALPHA, CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_FILTER_BETA,
                 CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_FILTER_CONV_DESC,
                 {{CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_FILTER_X, &x},
                  {CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_FILTER_DY, &dy},
                  {CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_FILTER_DW, &dw}},
                 conv, compute, "a convolution backward-filter operation");
}

Descriptor pointwise_op(cudnnPointwiseMode_t mode, const Descriptor& x, const Descriptor* b, const Descriptor& y) {
  const char* what = "a pointwise operation";
  Descriptor pw(CUDNN_BACKEND_POINTWISE_DESCRIPTOR);
  const cudnnDataType_t precision = CUDNN_DATA_FLOAT;
  pw.set(CUDNN_ATTR_POINTWISE_MODE, CUDNN_TYPE_POINTWISE_MODE, 1, &mode, what);
  pw.set(CUDNN_ATTR_POINTWISE_MATH_PREC, CUDNN_TYPE_DATA_TYPE, 1, &precision, what);
  pw.finalize(what);
  Descriptor op(CUDNN_BACKEND_OPERATION_POINTWISE_DESCRIPTOR);
  op.set(CUDNN_ATTR_OPERATION_POINTWISE_PW_DESCRIPTOR, pw, what);
  op.set(CUDNN_ATTR_OPERATION_POINTWISE_XDESC, x, what);
  if (b) op.set(CUDNN_ATTR_OPERATION_POINTWISE_BDESC, *b, what);
  op.set(CUDNN_ATTR_OPERATION_POINTWISE_YDESC, y, what);
  op.finalize(what);
  return op;
}

Descriptor matmul_op(const Descriptor& a, const Descriptor& b, const Descriptor& c) {
  const char* what = "a matmul operation";
  Descriptor mm(CUDNN_BACKEND_MATMUL_DESCRIPTOR);
  const cudnnDataType_t compute = CUDNN_DATA_FLOAT;
  mm.set(CUDNN_ATTR_MATMUL_COMP_TYPE, CUDNN_TYPE_DATA_TYPE, 1, &compute, what);
  mm.finalize(what);
  Descriptor op(CUDNN_BACKEND_OPERATION_MATMUL_DESCRIPTOR);
  op.set(CUDNN_ATTR_OPERATION_MATMUL_ADESC, a, what);
  op.set(CUDNN_ATTR_OPERATION_MATMUL_BDESC, b, what);
  op.set(CUDNN_ATTR_OPERATION_MATMUL_CDESC, c, what);
  op.set(CUDNN_ATTR_OPERATION_MATMUL_DESC, mm, what);
  op.finalize(what);
  return op;
}

Descriptor reduction_op(cudnnReduceTensorOp_t mode, const Descriptor& x, const Descriptor& y) {
  const char* what = "a reduction operation";
  Descriptor red(CUDNN_BACKEND_REDUCTION_DESCRIPTOR);
  const cudnnDataType_t compute = CUDNN_DATA_FLOAT;
  red.set(CUDNN_ATTR_REDUCTION_COMP_TYPE, CUDNN_TYPE_DATA_TYPE, 1, &compute, what);
  red.set(CUDNN_ATTR_REDUCTION_OPERATOR, CUDNN_TYPE_REDUCTION_OPERATOR_TYPE, 1, &mode, what);
  red.finalize(what);
  Descriptor op(CUDNN_BACKEND_OPERATION_REDUCTION_DESCRIPTOR);
  op.set(CUDNN_ATTR_OPERATION_REDUCTION_DESC, red, what);
  op.set(CUDNN_ATTR_OPERATION_REDUCTION_XDESC, x, what);
  op.set(CUDNN_ATTR_OPERATION_REDUCTION_YDESC, y, what);
  op.finalize(what);
  return op;
}

Descriptor genstats_op(const Descriptor& x, const Descriptor& sum, const Descriptor& sqsum) {
  const char* what = "a statistics operation";
  Descriptor op(CUDNN_BACKEND_OPERATION_GEN_STATS_DESCRIPTOR);
  const cudnnGenStatsMode_t mode = CUDNN_GENSTATS_SUM_SQSUM;
  const cudnnDataType_t precision = CUDNN_DATA_FLOAT;
  op.set(CUDNN_ATTR_OPERATION_GENSTATS_MODE, CUDNN_TYPE_GENSTATS_MODE, 1, &mode, what);
  op.set(CUDNN_ATTR_OPERATION_GENSTATS_MATH_PREC, CUDNN_TYPE_DATA_TYPE, 1, &precision, what);
  op.set(CUDNN_ATTR_OPERATION_GENSTATS_XDESC, x, what);
  op.set(CUDNN_ATTR_OPERATION_GENSTATS_SUMDESC, sum, what);
  op.set(CUDNN_ATTR_OPERATION_GENSTATS_SQSUMDESC, sqsum, what);
  op.finalize(what);
  return op;
}

Descriptor bernoulli_op(double keep, const Descriptor& seed, const Descriptor& offset, const Descriptor& y) {
  const char* what = "a random-number operation";
  Descriptor rng(CUDNN_BACKEND_RNG_DESCRIPTOR);
  const cudnnRngDistribution_t distribution = CUDNN_RNG_DISTRIBUTION_BERNOULLI;
  rng.set(CUDNN_ATTR_RNG_DISTRIBUTION, CUDNN_TYPE_RNG_DISTRIBUTION, 1, &distribution, what);
  rng.set(CUDNN_ATTR_RNG_BERNOULLI_DIST_PROBABILITY, CUDNN_TYPE_DOUBLE, 1, &keep, what);
  rng.finalize(what);
  Descriptor op(CUDNN_BACKEND_OPERATION_RNG_DESCRIPTOR);
  op.set(CUDNN_ATTR_OPERATION_RNG_YDESC, y, what);
  op.set(CUDNN_ATTR_OPERATION_RNG_DESC, rng, what);
  op.set(CUDNN_ATTR_OPERATION_RNG_SEED, seed, what);
  op.set(CUDNN_ATTR_OPERATION_RNG_OFFSET_DESC, offset, what);
  op.finalize(what);
  return op;
}

Descriptor reshape_op(const Descriptor& x, const Descriptor& y) {
  const char* what = "a reshape operation";
  Descriptor op(CUDNN_BACKEND_OPERATION_RESHAPE_DESCRIPTOR);
  op.set(CUDNN_ATTR_OPERATION_RESHAPE_XDESC, x, what);
  op.set(CUDNN_ATTR_OPERATION_RESHAPE_YDESC, y, what);
  op.finalize(what);
  return op;
}

std::shared_ptr<ExecutionPlan> build_plan(cudnnHandle_t handle, std::vector<Descriptor> ops, const EngineFilter& filter,
                                          const char* what, const char* otherwise, const PlanTimer* timer) {
  Descriptor graph(CUDNN_BACKEND_OPERATIONGRAPH_DESCRIPTOR);
  std::vector<cudnnBackendDescriptor_t> raw;
  for (const auto& op : ops) raw.push_back(op.get());
  graph.set(CUDNN_ATTR_OPERATIONGRAPH_HANDLE, CUDNN_TYPE_HANDLE, 1, &handle, what);
  graph.set(CUDNN_ATTR_OPERATIONGRAPH_OPS, CUDNN_TYPE_BACKEND_DESCRIPTOR, static_cast<int64_t>(raw.size()), raw.data(),
            what);
  static const bool log = switches::cudnn_log().get();
  if (const cudnnStatus_t st = graph.try_finalize(); st != CUDNN_STATUS_SUCCESS) {
    if (log)
      std::fprintf(stderr, "[cudnn] %s: the operation graph does not finalize (%s); %s\n", what,
                   cudnnGetErrorString(st), otherwise);
    return nullptr;
  }
  const auto start = std::chrono::steady_clock::now();
  // The candidates in the heuristics' order: the first only, or with a
  // timer up to kMaxTimedPlans of them. The fallback list is asked only when
  // mode A gives none: its engines are the slow generic ones, some compiled
  // at run time.
  struct Candidate {
    std::shared_ptr<ExecutionPlan> plan;
    bool from_a = true;
    bool runtime_compiled = false;
  };
  std::vector<Candidate> candidates;
  const size_t wanted = timer != nullptr ? kMaxTimedPlans : 1;
  for (cudnnBackendHeurMode_t mode : {CUDNN_HEUR_MODE_A, CUDNN_HEUR_MODE_FALLBACK}) {
    if (!candidates.empty()) break;
    std::vector<Descriptor> configs = heuristic_configs(graph, mode);
    for (Descriptor& cfg : configs) {
      if (candidates.size() >= wanted) break;
      const EngineNotes notes = read_notes(cfg.get());
      if (!passes(notes, filter)) continue;
      Descriptor plan(CUDNN_BACKEND_EXECUTION_PLAN_DESCRIPTOR);
      plan.set(CUDNN_ATTR_EXECUTION_PLAN_HANDLE, CUDNN_TYPE_HANDLE, 1, &handle, what);
      plan.set(CUDNN_ATTR_EXECUTION_PLAN_ENGINE_CONFIG, cfg, what);
      if (plan.try_finalize() != CUDNN_STATUS_SUCCESS) continue;
      int64_t workspace = 0, count = 0;
      if (cudnnBackendGetAttribute(plan.get(), CUDNN_ATTR_EXECUTION_PLAN_WORKSPACE_SIZE, CUDNN_TYPE_INT64, 1, &count,
                                   &workspace) != CUDNN_STATUS_SUCCESS ||
          workspace > filter.max_workspace)
        continue;
      auto out = std::make_shared<ExecutionPlan>();
      out->plan_ = std::move(plan);
      out->config_ = std::move(cfg);
      out->workspace_ = workspace;
      out->engine_ = notes.index;
      candidates.push_back({std::move(out), mode == CUDNN_HEUR_MODE_A, notes.runtime_compiled});
    }
  }
  if (candidates.empty()) {
    if (log) std::fprintf(stderr, "[cudnn] %s: no engine of the graph API; %s\n", what, otherwise);
    return nullptr;
  }
  // With a timer the fastest candidate that ran; the heuristics' first when
  // none could be timed.
  size_t chosen = 0;
  int timed = 0;
  if (timer != nullptr && candidates.size() > 1) {
    double best = 0;
    for (size_t i = 0; i < candidates.size(); ++i) {
      const double ms = (*timer)(*candidates[i].plan);
      if (ms < 0) continue;
      ++timed;
      if (timed == 1 || ms < best) {
        best = ms;
        chosen = i;
      }
    }
  }
  Candidate& c = candidates[chosen];
  c.plan->graph_ = std::move(graph);
  c.plan->ops_ = std::move(ops);
  if (log)
    std::fprintf(stderr, "[cudnn] %s: engine %lld%s (heuristics %s%s), workspace %lld bytes, planned in %.0f ms\n",
                 what, static_cast<long long>(c.plan->engine_), c.runtime_compiled ? " (runtime-compiled)" : "",
                 c.from_a ? "A" : "fallback",
                 timed > 0 ? (", fastest of " + std::to_string(timed) + " timed").c_str() : "",
                 static_cast<long long>(c.plan->workspace_),
                 std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count());
  return c.plan;
}

void ExecutionPlan::execute(cudnnHandle_t handle, const std::vector<int64_t>& uids, const std::vector<void*>& data,
                            void* workspace) const {
  Descriptor pack(CUDNN_BACKEND_VARIANT_PACK_DESCRIPTOR);
  const char* what = "a variant pack";
  pack.set(CUDNN_ATTR_VARIANT_PACK_UNIQUE_IDS, CUDNN_TYPE_INT64, static_cast<int64_t>(uids.size()), uids.data(), what);
  pack.set(CUDNN_ATTR_VARIANT_PACK_DATA_POINTERS, CUDNN_TYPE_VOID_PTR, static_cast<int64_t>(data.size()), data.data(),
           what);
  pack.set(CUDNN_ATTR_VARIANT_PACK_WORKSPACE, CUDNN_TYPE_VOID_PTR, 1, &workspace, what);
  pack.finalize(what);
  check(cudnnBackendExecute(handle, plan_.get(), pack.get()), "cudnnBackendExecute", "a graph-API plan");
}

int64_t pointer_alignment(const void* p) {
  const auto a = reinterpret_cast<uintptr_t>(p);
  int64_t align = 16;
  while (align > 1 && a % static_cast<uintptr_t>(align) != 0) align /= 2;
  return align;
}

}  // namespace hearth::cuda::cudnn_graph
