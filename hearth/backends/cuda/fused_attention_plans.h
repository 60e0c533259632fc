// fused_attention's cuDNN graphs (fused_attention_plans.cu): the forward and
// backward of flash attention described as graphs of cuDNN operations, which
// its attention engines recognise and run as one kernel each; an execution
// plan per problem, built on first use and replayed. fused_attention.cu runs
// them; a problem no engine takes is refused once and for all (its plan is
// cached as null) and the functional layer keeps the unfused path for it.
#pragma once

#include <cudnn.h>

#include <array>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "hearth/backends/cuda/cudnn_graph.h"
#include "hearth/core/tensor.h"

namespace hearth::cuda {

// One call's shapes and layouts: everything a plan depends on (the scale and
// the dropout scale are by-value scalars, bound at each execution).
struct AttentionProblem {
  int device = 0;
  DType dtype = DType::bfloat16;
  int64_t B = 0, H = 0, L = 0, S = 0, D = 0, Dv = 0;
  // [B, H, rows, cols] strides, those of size-1 dims made canonical (a size-1
  // dim's stride addresses nothing, and the gradients allocated "like q" may
  // carry another value there).
  std::array<int64_t, 4> q{}, k{}, v{}, out{};
  bool has_mask = false;
  std::array<int64_t, 4> mask_dims{}, mask{};  // [B or 1, 1, L or 1, S]
  bool stats = false;                          // the forward writes lse: a training call
  double p = 0;                                // dropout probability

  std::vector<int64_t> key(int pass) const;
  std::string describe() const;  // for messages and the HEARTH_CUDNN_LOG lines
};

// The problem of a forward call (q, k, v, out, the optional mask; `stats`:
// lse is written) or of a backward call (the same tensors; stats true).
AttentionProblem attention_problem(const Tensor& q, const Tensor& k, const Tensor& v, const Tensor& out,
                                   const Tensor& mask, bool stats, double p);

// The tensors of the plans' variant packs.
enum AttentionUid : int64_t {
  kAttnQ = 1,
  kAttnK,
  kAttnV,
  kAttnOut,
  kAttnStats,
  kAttnMask,
  kAttnScale,
  kAttnSeed,
  kAttnOffset,
  kAttnDropScale,  // 1 / (1 - p)
  kAttnDropKeep,   // 1 - p: the backward's row sums are of dropped weights
  kAttnOne,        // the backward's row sums without dropout
  kAttnGradOut,
  kAttnGradQ,
  kAttnGradK,
  kAttnGradV,
  kAttnRowSums,     // float [B, H, L, 1]: sum over Dv of grad_out * out, scaled
  kAttnGradQFloat,  // float [B, H, L, D]: grad_q accumulated before its rounding
  kAttnFirstVirtual = 100,
};

// The cached plans; null when no engine takes the problem's graph.
std::shared_ptr<cudnn_graph::ExecutionPlan> attention_forward_plan(const AttentionProblem& p, cudnnHandle_t h);
std::shared_ptr<cudnn_graph::ExecutionPlan> attention_backward_plan(const AttentionProblem& p, cudnnHandle_t h);

}  // namespace hearth::cuda
