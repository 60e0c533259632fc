// bmm on CUDA: one batched GEMM through cuBLASLt (gemm.h), the bias in its
// epilogue where cuBLASLt can, a partial sum to add into as its C operand,
// linear's bias gradient in the weight gradient's epilogue where cuBLASLt can.
#include "hearth/backends/cuda/gemm.h"
#include "hearth/dispatch/registry.h"

namespace hearth::cuda {
namespace {

Tensor a_sums_of(const OpCall& call) { return call.outputs.size() > 1 ? call.out(1) : Tensor(); }

void bmm_kernel(OpCall& call) {
  gemm_batched(call.in(0), call.in(1), call.out(0), call.inputs.size() > 2 ? call.in(2) : Tensor(),
               call.inputs.size() > 3 ? call.in(3) : Tensor(), a_sums_of(call));
}

// Every call is taken, except that one asking for a's sums (linear's bias
// gradient) is taken only where cuBLASLt's epilogue computes them: elsewhere
// the functional layer keeps its product with a row of ones (a GEMV cuBLASLt
// spreads over the whole GPU), not gemm_batched's one-thread-per-sum kernel,
// which is there so that any call is computed.
bool bmm_check(const OpCall& call) {
  const Tensor sums = a_sums_of(call);
  return !sums.defined() || gemm_fuses_a_sums(call.in(0), call.in(1), call.out(0), sums);
}

HEARTH_REGISTER_KERNEL(bmm, register_device_kind("cuda"), bmm_kernel, DTypeSet::floating());
HEARTH_REGISTER_KERNEL_CHECK(bmm, register_device_kind("cuda"), bmm_check);

}  // namespace
}  // namespace hearth::cuda
