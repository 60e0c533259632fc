// bmm on Vulkan: one tiled shared-memory GEMM per call (gemm.h), float32,
// float16 or bfloat16 (accumulated in float32), operands read through their strides
// (transposes are strides).
// a_sums, when asked for, is a second product: a[0] @ ones[K].
#include <algorithm>

#include "hearth/backends/vulkan/gemm.h"
#include "hearth/backends/vulkan/kernel_launch.h"
#include "hearth/dispatch/registry.h"
#include "hearth/ops/factory.h"

namespace hearth::vulkan {
namespace {

const DTypeSet kFloat = {DType::float32, DType::float16, DType::bfloat16};

void bmm_kernel(OpCall& call) {
  const Tensor& a = call.in(0);
  const Tensor& b = call.in(1);
  const Tensor bias = call.inputs.size() > 2 ? call.in(2) : Tensor();
  const Tensor partial = call.inputs.size() > 3 ? call.in(3) : Tensor();
  const Tensor& out = call.out(0);
  // float16 a and b may write a float32 out (schemas/matmul.h); the GEMM
  // takes each operand's dtype as it comes.
  HEARTH_CHECK(b.dtype() == a.dtype() && kFloat.contains(a.dtype()) &&
                   (out.dtype() == a.dtype() || out.dtype() == DType::float32),
               NotImplementedError, "[bmm] the Vulkan kernel takes float32, float16 or bfloat16 operands, got ",
               dtype_name(a.dtype()), " and ", dtype_name(b.dtype()), " into ", dtype_name(out.dtype()));
  run_gemm(a, b, out, bias, partial);
  if (call.outputs.size() > 1 && call.out(1).defined()) {
    const Tensor& sums = call.out(1);
    const int64_t K = a.size(2);
    const Tensor ones_k = ones({1, K, 1}, a.dtype(), out.device());
    run_gemm(a.select(0, 0).unsqueeze(0), ones_k, sums.view({1, sums.numel(), 1}), Tensor(), Tensor());
  }
}

HEARTH_REGISTER_KERNEL(bmm, vulkan_kind(), bmm_kernel, kFloat);

}  // namespace
}  // namespace hearth::vulkan
