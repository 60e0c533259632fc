// bmm on CUDA: one batched GEMM through cuBLASLt (gemm.h), the bias in its
// epilogue where cuBLASLt can, a partial sum to add into as its C operand.
#include "hearth/backends/cuda/gemm.h"
#include "hearth/dispatch/registry.h"

namespace hearth::cuda {
namespace {

void bmm_kernel(OpCall& call) {
  gemm_batched(call.in(0), call.in(1), call.out(0), call.inputs.size() > 2 ? call.in(2) : Tensor(),
               call.inputs.size() > 3 ? call.in(3) : Tensor());
}

HEARTH_REGISTER_KERNEL(bmm, register_device_kind("cuda"), bmm_kernel, DTypeSet::floating());

}  // namespace
}  // namespace hearth::cuda
