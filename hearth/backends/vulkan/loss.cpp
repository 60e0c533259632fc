// cross_entropy, nll_loss and their backwards on Vulkan
// (shaders/cross_entropy.comp, shaders/nll_loss.comp), float32 (16-bit floats on
// widened copies: half_widening.h) over dense
// [M, C] rows. A target out of range cannot raise on the device: it gives a
// NaN loss (hearth/dispatch/schemas/loss.h).
#include "hearth/dispatch/schemas/loss.h"

#include <algorithm>

#include "hearth/backends/vulkan/half_widening.h"
#include "hearth/backends/vulkan/kernel_launch.h"
#include "hearth/dispatch/registry.h"

namespace hearth::vulkan {
namespace {

void push_int64(KernelParams& p, int64_t v) { p.u64(static_cast<uint64_t>(v)); }

void run_cross_entropy(OpCall& call, bool backward) {
  const CrossEntropyAttrs& at = call.attrs<CrossEntropyAttrs>();
  const Tensor& x = call.in(0);
  const int64_t M = x.shape()[0], C = x.shape()[1];
  if (M == 0) return;
  Dispatch d("cross_entropy", x.device().index);
  const Tensor weight = backward ? call.in(4) : call.in(2);
  if (backward)
    d.tensors = {x, call.in(1), weight, call.in(2), call.in(3), call.out(0)};
  else
    d.tensors = {x, call.in(1), weight, call.out(1), call.out(0), call.out(2)};
  d.spec = {backward ? 1u : 0u};
  d.params.u32(static_cast<uint32_t>(M)).u32(static_cast<uint32_t>(C)).u32(weight.defined() ? 1 : 0);
  push_int64(d.params, at.ignore_index);
  d.params.f32(static_cast<float>(at.label_smoothing));
  d.use_row_workgroup(C);
  d.groups_x = static_cast<uint32_t>(std::min<int64_t>(M, device_limits(d.device).max_groups_x));
  d.run();
}

void cross_entropy_kernel(OpCall& call) { run_cross_entropy(call, false); }
void cross_entropy_backward_kernel(OpCall& call) { run_cross_entropy(call, true); }

void run_nll(OpCall& call, bool backward) {
  const int64_t ignore = call.attrs<NllLossAttrs>().ignore_index;
  const Tensor& first = backward ? call.out(0) : call.in(0);
  const int64_t M = first.shape()[0], C = first.shape()[1];
  if (M == 0) return;
  Dispatch d("nll_loss", first.device().index);
  if (backward)
    d.tensors = {call.in(0), call.in(1), call.in(2), call.out(0), Tensor()};
  else
    d.tensors = {call.in(0), call.in(1), call.in(2), call.out(0), call.out(1)};
  d.spec = {backward ? 1u : 0u};
  d.params.u32(static_cast<uint32_t>(M)).u32(static_cast<uint32_t>(C)).u32(call.in(2).defined() ? 1 : 0);
  push_int64(d.params, ignore);
  d.groups_x = d.groups_for(backward ? M * C : M);
  d.run();
}

void nll_loss_kernel(OpCall& call) { run_nll(call, false); }
void nll_loss_backward_kernel(OpCall& call) { run_nll(call, true); }

// float16 and bfloat16 through float32 copies (half_widening.h).
const DTypeSet kFloat = {DType::float32, DType::float16, DType::bfloat16};

HEARTH_REGISTER_KERNEL(cross_entropy, vulkan_kind(), (widened<OpId::cross_entropy, cross_entropy_kernel>), kFloat);
HEARTH_REGISTER_KERNEL(cross_entropy_backward, vulkan_kind(),
                       (widened<OpId::cross_entropy_backward, cross_entropy_backward_kernel>), kFloat);
HEARTH_REGISTER_KERNEL(nll_loss, vulkan_kind(), (widened<OpId::nll_loss, nll_loss_kernel>), kFloat);
HEARTH_REGISTER_KERNEL(nll_loss_backward, vulkan_kind(), (widened<OpId::nll_loss_backward, nll_loss_backward_kernel>),
                       kFloat);

}  // namespace
}  // namespace hearth::vulkan
