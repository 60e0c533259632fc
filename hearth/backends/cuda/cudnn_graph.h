// A small builder over cuDNN's graph API (the backend descriptors of
// cudnn_graph.h), for what the legacy entry points cannot give: an execution
// plan built once per shape and reused, so a call costs one variant pack and
// one cudnnBackendExecute on the host, and fused operation graphs (a
// convolution's epilogue, attention).
//
// Usage: describe tensors (TensorSpec, each with a unique id), make the
// operations, build_plan() them into an ExecutionPlan (heuristics, then the
// first engine configuration that finalizes and passes the filter), and run it
// with the data pointers keyed by the same ids. Plans are immutable after
// build and safe to share; callers cache them by shape.
#pragma once

#include <cudnn.h>

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <utility>
#include <vector>

namespace hearth::cuda::cudnn_graph {

// An owned backend descriptor.
class Descriptor {
 public:
  Descriptor() = default;
  explicit Descriptor(cudnnBackendDescriptorType_t type);
  ~Descriptor();
  Descriptor(Descriptor&& o) noexcept : d_(std::exchange(o.d_, nullptr)) {}
  Descriptor& operator=(Descriptor&& o) noexcept;
  Descriptor(const Descriptor&) = delete;
  Descriptor& operator=(const Descriptor&) = delete;

  cudnnBackendDescriptor_t get() const { return d_; }
  // Set an attribute (count values of the given type); throws DeviceError naming `what` on failure.
  void set(cudnnBackendAttributeName_t name, cudnnBackendAttributeType_t type, int64_t count, const void* values,
           const char* what);
  void set(cudnnBackendAttributeName_t name, const Descriptor& d, const char* what);
  // cudnnBackendFinalize's status, unchecked: an engine may not support a graph.
  cudnnStatus_t try_finalize();
  void finalize(const char* what);

 private:
  cudnnBackendDescriptor_t d_ = nullptr;
};

struct TensorSpec {
  int64_t uid = 0;
  cudnnDataType_t dtype = CUDNN_DATA_FLOAT;
  std::vector<int64_t> dims, strides;
  int64_t alignment = 16;  // bytes; the data pointer must be aligned at least this well
  bool is_virtual = false;
  // A scalar passed by value: its variant-pack pointer is a host address,
  // read when the plan is executed (so the value is no part of the plan).
  bool by_value = false;
};

Descriptor make_tensor(const TensorSpec& t);

struct ConvGeometry {
  std::vector<int64_t> padding, stride, dilation;
  cudnnDataType_t compute = CUDNN_DATA_FLOAT;
};

Descriptor make_convolution(const ConvGeometry& g);

// y = conv(x, w); dx = conv_data_grad(dy, w) + beta * dx; dw = conv_filter_grad(x, dy).
// beta = 1 adds the data gradient into what dx holds (a sum of gradients).
Descriptor conv_forward_op(const Descriptor& conv, const Descriptor& x, const Descriptor& w, const Descriptor& y,
                           cudnnDataType_t compute);
Descriptor conv_backward_data_op(const Descriptor& conv, const Descriptor& dy, const Descriptor& w,
                                 const Descriptor& dx, cudnnDataType_t compute, double beta = 0.0);
Descriptor conv_backward_filter_op(const Descriptor& conv, const Descriptor& x, const Descriptor& dy,
                                   const Descriptor& dw, cudnnDataType_t compute);

// y = mode(x) or y = mode(x, b) elementwise, computed in float; b broadcasts
// where its dims are 1 (a per-channel [1, C, 1, 1] bias or scale). The
// epilogues of a fused convolution graph are chains of these.
Descriptor pointwise_op(cudnnPointwiseMode_t mode, const Descriptor& x, const Descriptor* b, const Descriptor& y);

// c = a @ b over the last two dims, batched over the leading ones, computed in float.
Descriptor matmul_op(const Descriptor& a, const Descriptor& b, const Descriptor& c);

// y = the reduction of x over the dims where y has size 1, computed in float
// (CUDNN_REDUCE_TENSOR_MAX, CUDNN_REDUCE_TENSOR_ADD, ...).
Descriptor reduction_op(cudnnReduceTensorOp_t mode, const Descriptor& x, const Descriptor& y);

// sum = the sum of x and sqsum = the sum of x * x over the dims where they
// have size 1, computed in float: a per-channel [1, C, 1, 1] pair is batch
// norm's training statistics, which runtime-fusion engines can take from a
// convolution's output in its epilogue.
Descriptor genstats_op(const Descriptor& x, const Descriptor& sum, const Descriptor& sqsum);

// y = Bernoulli draws of probability `keep` (1 or 0) from cuDNN's Philox
// generator, keyed by the seed and offset tensors (int64 [1, 1, 1, 1]).
Descriptor bernoulli_op(double keep, const Descriptor& seed, const Descriptor& offset, const Descriptor& y);

// y = x with other dims and strides (a transpose of the last two, in attention's backward).
Descriptor reshape_op(const Descriptor& x, const Descriptor& y);

// Which engine configurations a plan may use.
struct EngineFilter {
  bool allow_tensor_core = true;        // false: float32 without TF32
  bool allow_down_convert = false;      // inputs converted to a narrower type inside the engine
  bool allow_runtime_compiled = false;  // NVRTC at first use (seconds); off for single ops
  int64_t max_workspace = int64_t(2) << 30;
};

class ExecutionPlan;

// Runs a candidate plan and says how long it took (milliseconds), or a
// negative number when it could not be run: the caller's own tensors and
// scratch outputs are behind it.
using PlanTimer = std::function<double(const ExecutionPlan&)>;

// Candidates a timer tries at most (cuDNN's heuristics rank them; the best
// is almost always among the first few).
inline constexpr size_t kMaxTimedPlans = 8;

class ExecutionPlan {
 public:
  int64_t workspace_bytes() const { return workspace_; }
  int64_t engine_index() const { return engine_; }
  // data[i] belongs to uids[i]; workspace has workspace_bytes() (or is null when 0).
  void execute(cudnnHandle_t handle, const std::vector<int64_t>& uids, const std::vector<void*>& data,
               void* workspace) const;

 private:
  friend std::shared_ptr<ExecutionPlan> build_plan(cudnnHandle_t, std::vector<Descriptor>, const EngineFilter&,
                                                   const char*, const char*, const PlanTimer*);
  // What the plan was built from, kept alive with it.
  std::vector<Descriptor> ops_;
  Descriptor graph_, config_;
  Descriptor plan_;
  int64_t workspace_ = 0;
  int64_t engine_ = -1;
};

// The first configuration cuDNN's heuristics rank highest (mode A, else the
// fallback list) that passes the filter and finalizes; with a `timer`, the
// fastest of the first kMaxTimedPlans such configurations, as timed
// (cudnn.benchmark's autotuning, for the graph API). nullptr when none
// finalizes (the caller keeps its other path for that shape, which
// `otherwise` names in the HEARTH_CUDNN_LOG=1 line).
std::shared_ptr<ExecutionPlan> build_plan(cudnnHandle_t handle, std::vector<Descriptor> ops, const EngineFilter& filter,
                                          const char* what, const char* otherwise = "legacy path",
                                          const PlanTimer* timer = nullptr);

// The largest power of two (at most 16) that divides the address: a tensor's
// declared alignment, part of a plan's cache key.
int64_t pointer_alignment(const void* p);

}  // namespace hearth::cuda::cudnn_graph
