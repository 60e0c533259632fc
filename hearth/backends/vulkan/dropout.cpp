// dropout and its backward on Vulkan (shaders/dropout.comp): the CPU's keep
// decisions (the same Philox lanes), float32 (16-bit floats on widened copies:
// half_widening.h).
#include "hearth/dispatch/schemas/dropout.h"

#include <cmath>

#include "hearth/backends/vulkan/half_widening.h"
#include "hearth/backends/vulkan/kernel_launch.h"
#include "hearth/dispatch/registry.h"

namespace hearth::vulkan {
namespace {

void run_dropout(uint32_t op, const Tensor& a, const Tensor& b, const Tensor& mask, const DropoutAttrs& at) {
  const int64_t n = a.numel();
  if (n == 0) return;
  Dispatch d("dropout", a.device().index);
  d.tensors = {a, b, mask};
  d.spec = {op};
  // u = k * 2^-24 >= p exactly when k >= ceil(p * 2^24) (a power of two: the product is exact).
  const double keep_from = std::ceil(at.p * 16777216.0);
  d.params.u32(static_cast<uint32_t>(n)).u64(at.seed).u64(at.offset);
  d.params.u32(static_cast<uint32_t>(keep_from)).f32(static_cast<float>(1.0 / (1.0 - at.p)));
  d.groups_x = d.groups_for(op == 0 ? (n + 3) / 4 : n);
  d.run();
}

void dropout_kernel(OpCall& call) { run_dropout(0, call.in(0), call.out(0), call.out(1), call.attrs<DropoutAttrs>()); }
void dropout_backward_kernel(OpCall& call) {
  run_dropout(1, call.in(0), call.out(0), call.in(1), call.attrs<DropoutAttrs>());
}

// float16 and bfloat16 through float32 copies (half_widening.h).
const DTypeSet kFloat = {DType::float32, DType::float16, DType::bfloat16};

HEARTH_REGISTER_KERNEL(dropout, vulkan_kind(), (widened<OpId::dropout, dropout_kernel>), kFloat);
HEARTH_REGISTER_KERNEL(dropout_backward, vulkan_kind(), (widened<OpId::dropout_backward, dropout_backward_kernel>),
                       kFloat);

}  // namespace
}  // namespace hearth::vulkan
