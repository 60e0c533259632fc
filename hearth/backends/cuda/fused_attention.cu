// fused_attention on CUDA through cuDNN's attention engines (the graphs are in
// fused_attention_plans.cu): one kernel forward, one backward, the [B, H, L, S]
// weights never in memory. bfloat16 and float16, D and Dv multiples of 8 up to
// 128. The check tells the functional layer, before anything runs, whether
// the engines take a call (forward, and backward when it will be
// differentiated), so a refused shape keeps the unfused path.
//
// Dropout: cuDNN's RNG operation draws the keep mask from a seed and an offset
// it reads from device memory. The forward writes them there with a one-thread
// kernel that adds the Philox shift of a replayed step graph (philox.cuh), so
// each replay draws what the eager step would have; the backward reads the
// same two words and drops exactly what its forward dropped.
#include <cuda_runtime.h>

#include "hearth/backends/cuda/context.h"
#include "hearth/backends/cuda/cuda_check.h"
#include "hearth/backends/cuda/cudnn_util.h"
#include "hearth/backends/cuda/fused_attention_plans.h"
#include "hearth/backends/cuda/philox.cuh"
#include "hearth/backends/cuda/step_graph.h"
#include "hearth/dispatch/registry.h"
#include "hearth/dispatch/schemas/fused_attention.h"

namespace hearth::cuda {
namespace {

DeviceKind cuda_kind() { return register_device_kind("cuda"); }

__global__ void write_dropout_state(int64_t* state, uint64_t seed, uint64_t offset, const uint64_t* shift) {
  state[0] = static_cast<int64_t>(seed);
  state[1] = static_cast<int64_t>(philox_offset(offset, shift));
}

// The engines read 16-byte aligned rows; the plans declare it.
constexpr int64_t kAlignment = 16;

bool aligned(const Tensor& t) { return cudnn_graph::pointer_alignment(t.data_ptr()) >= kAlignment; }

// An input at an aligned address: itself, or a copy of the memory it spans
// with the same strides (a view into a larger buffer can start anywhere).
Tensor aligned_input(const Tensor& t) {
  if (!t.defined() || aligned(t)) return t;
  int64_t span = 1;
  for (int64_t d = 0; d < t.dim(); ++d) span += (t.size(d) - 1) * t.strides()[d];
  Tensor copy = Tensor::empty({span}, t.dtype(), t.device());
  HEARTH_CUDA_CHECK(cudaMemcpyAsync(copy.data_ptr(), t.data_ptr(), static_cast<size_t>(span) * t.element_size(),
                                    cudaMemcpyDeviceToDevice, stream(t.device().index)));
  return copy.as_strided_view(t.shape(), t.strides(), 0);
}

void check_aligned_output(const Tensor& t, const char* what) {
  HEARTH_CHECK(aligned(t), DeviceError, "[fused_attention] expected the ", what,
               " at a 16-byte aligned address (the functional layer allocates it so)");
}

bool head_dim_taken(int64_t d) { return d % 8 == 0 && d <= 128; }

// Whether the engines take the call: forward, and backward too when lse is
// wanted (the call will be differentiated). Plans are built here, once per
// shape, so the call itself only looks them up.
bool fused_attention_check(const OpCall& call) {
  const Tensor &q = call.in(0), &k = call.in(1), &v = call.in(2), &mask = call.in(3);
  const Tensor &out = call.out(0), &lse = call.out(1);
  if (q.dtype() != DType::bfloat16 && q.dtype() != DType::float16) return false;
  if (!head_dim_taken(q.size(3)) || !head_dim_taken(v.size(3))) return false;
  // The schema's mask shape: a mask broadcast by a dim of size 1 is misread
  // by the backward engine (it must come broadcast by stride 0).
  if (mask.defined() && (mask.size(0) != q.size(0) || mask.size(2) != q.size(2))) return false;
  const int device = q.device().index;
  activate(device);
  cudnnHandle_t h = cudnn_handle(device);
  const AttentionProblem p = attention_problem(q, k, v, out, mask, lse.defined(), call.attrs<FusedAttentionAttrs>().p);
  if (!attention_forward_plan(p, h)) return false;
  return !lse.defined() || attention_backward_plan(p, h) != nullptr;
}

void run_plan(const cudnn_graph::ExecutionPlan& plan, cudnnHandle_t h, const std::vector<int64_t>& uids,
              const std::vector<void*>& data, Device device) {
  const int64_t bytes = plan.workspace_bytes();
  Tensor workspace = bytes > 0 ? Tensor::empty({bytes}, DType::uint8, device) : Tensor();
  plan.execute(h, uids, data, workspace.defined() ? workspace.data_ptr() : nullptr);
}

// The tensors every plan binds: q, k, v, out, the mask and the scale; and,
// with dropout, the seed, the offset and the dropout scale.
struct Bindings {
  std::vector<int64_t> uids;
  std::vector<void*> data;
  float scale = 1, drop_scale = 1, drop_keep = 1, one = 1;  // by-value scalars, read at execution

  void bind(int64_t uid, void* p) {
    uids.push_back(uid);
    data.push_back(p);
  }
  void bind_common(const Tensor& q, const Tensor& k, const Tensor& v, const Tensor& out, const Tensor& mask,
                   const Tensor& rng, const FusedAttentionAttrs& a) {
    scale = static_cast<float>(a.scale);
    bind(kAttnQ, q.data_ptr());
    bind(kAttnK, k.data_ptr());
    bind(kAttnV, v.data_ptr());
    bind(kAttnOut, out.data_ptr());
    bind(kAttnScale, &scale);
    if (mask.defined()) bind(kAttnMask, mask.data_ptr());
    if (a.p > 0.0) {
      drop_scale = static_cast<float>(1.0 / (1.0 - a.p));
      drop_keep = static_cast<float>(1.0 - a.p);
      int64_t* words = static_cast<int64_t*>(rng.data_ptr());
      bind(kAttnSeed, words);
      bind(kAttnOffset, words + 1);
      bind(kAttnDropScale, &drop_scale);
    }
  }
};

void fused_attention_forward(OpCall& call) {
  const Tensor q = aligned_input(call.in(0)), k = aligned_input(call.in(1)), v = aligned_input(call.in(2));
  const Tensor mask = aligned_input(call.in(3));
  const Tensor &out = call.out(0), &lse = call.out(1), &rng = call.out(2);
  const FusedAttentionAttrs& a = call.attrs<FusedAttentionAttrs>();
  const int device = q.device().index;
  activate(device);
  cudnnHandle_t h = cudnn_handle(device);
  const AttentionProblem p = attention_problem(q, k, v, out, mask, lse.defined(), a.p);
  const auto plan = attention_forward_plan(p, h);
  HEARTH_CHECK(plan, NotImplementedError, "[fused_attention] no cuDNN engine takes the forward of ", p.describe(),
               "; scaled_dot_product_attention runs such calls unfused (HEARTH_CUDNN_LOG=1 says why)");
  check_aligned_output(out, "output");
  if (a.p > 0.0) {
    write_dropout_state<<<1, 1, 0, stream(device)>>>(static_cast<int64_t*>(rng.data_ptr()), a.seed, a.offset,
                                                     philox_offset_shift(device));
    HEARTH_CUDA_CHECK_LAUNCH();
  }
  Bindings b;
  b.bind_common(q, k, v, out, mask, rng, a);
  if (lse.defined()) {
    check_aligned_output(lse, "log-sum-exp");
    b.bind(kAttnStats, lse.data_ptr());
  }
  run_plan(*plan, h, b.uids, b.data, q.device());
}

void fused_attention_backward(OpCall& call) {
  const Tensor grad_out = aligned_input(call.in(0));
  const Tensor q = aligned_input(call.in(1)), k = aligned_input(call.in(2)), v = aligned_input(call.in(3));
  const Tensor out = aligned_input(call.in(4)), lse = aligned_input(call.in(5)), mask = aligned_input(call.in(6));
  const Tensor& rng = call.in(7);
  const Tensor &grad_q = call.out(0), &grad_k = call.out(1), &grad_v = call.out(2);
  const FusedAttentionAttrs& a = call.attrs<FusedAttentionAttrs>();
  const int device = q.device().index;
  activate(device);
  cudnnHandle_t h = cudnn_handle(device);
  const AttentionProblem p = attention_problem(q, k, v, out, mask, /*stats=*/true, a.p);
  const auto plan = attention_backward_plan(p, h);
  HEARTH_CHECK(plan, NotImplementedError, "[fused_attention_backward] no cuDNN engine takes the backward of ",
               p.describe(), "; scaled_dot_product_attention runs such calls unfused (HEARTH_CUDNN_LOG=1 says why)");
  check_aligned_output(grad_q, "gradient of q");
  check_aligned_output(grad_k, "gradient of k");
  check_aligned_output(grad_v, "gradient of v");
  // The plan's own float tensors: the row sums of grad_out * out, and grad_q
  // before its rounding (cuDNN before 9.6 accumulates into it: zeroed then).
  Tensor row_sums = Tensor::empty({p.B, p.H, p.L}, DType::float32, q.device());
  Tensor grad_q_float = Tensor::empty({p.B, p.H, p.L, p.D}, DType::float32, q.device());
  if (cudnnGetVersion() < 90600)
    HEARTH_CUDA_CHECK(cudaMemsetAsync(grad_q_float.data_ptr(), 0, grad_q_float.nbytes(), stream(device)));
  Bindings b;
  b.bind_common(q, k, v, out, mask, rng, a);
  b.bind(kAttnGradOut, grad_out.data_ptr());
  b.bind(kAttnStats, lse.data_ptr());
  b.bind(kAttnGradQ, grad_q.data_ptr());
  b.bind(kAttnGradK, grad_k.data_ptr());
  b.bind(kAttnGradV, grad_v.data_ptr());
  b.bind(kAttnRowSums, row_sums.data_ptr());
  b.bind(kAttnGradQFloat, grad_q_float.data_ptr());
  b.bind(a.p > 0.0 ? kAttnDropKeep : kAttnOne, a.p > 0.0 ? static_cast<void*>(&b.drop_keep) : &b.one);
  run_plan(*plan, h, b.uids, b.data, q.device());
}

HEARTH_REGISTER_KERNEL(fused_attention, cuda_kind(), fused_attention_forward,
                       DTypeSet{DType::bfloat16, DType::float16});
HEARTH_REGISTER_KERNEL_CHECK(fused_attention, cuda_kind(), fused_attention_check);
HEARTH_REGISTER_KERNEL(fused_attention_backward, cuda_kind(), fused_attention_backward,
                       DTypeSet{DType::bfloat16, DType::float16});

}  // namespace
}  // namespace hearth::cuda
