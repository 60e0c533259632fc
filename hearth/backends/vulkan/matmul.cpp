// bmm on Vulkan (shaders/gemm.comp): one tiled shared-memory GEMM per call,
// float32, operands read through their strides (transposes are strides).
// a_sums, when asked for, is a second product: a[0] @ ones[K].
#include <algorithm>

#include "hearth/backends/vulkan/kernel_launch.h"
#include "hearth/dispatch/registry.h"
#include "hearth/ops/factory.h"

namespace hearth::vulkan {
namespace {

int32_t checked_stride(int64_t s) {
  HEARTH_CHECK(s >= INT32_MIN && s <= INT32_MAX, NotImplementedError, "[bmm] Vulkan strides must fit 32 bits, got ", s);
  return static_cast<int32_t>(s);
}

// Invocations per side of a workgroup: 16 x 16 where the device allows, else 8 x 8.
uint32_t tile_side(int device) {
  const DeviceLimits& l = device_limits(device);
  const uint32_t ts = l.max_workgroup_size >= 256 ? 16 : 8;
  // Two ts x (4 ts) float slices in shared memory.
  return 2u * ts * ts * 4u * 4u <= l.max_shared_bytes ? ts : 8;
}

// out [B, M, N] (dense) = a [B, M, K] @ b [B, K, N] (+ bias) (+ partial).
void gemm(const Tensor& a, const Tensor& b, const Tensor& out, const Tensor& bias, const Tensor& partial) {
  const int64_t B = a.size(0), M = a.size(1), K = a.size(2), N = b.size(2);
  Dispatch d("gemm", out.device().index);
  const uint32_t ts = tile_side(d.device);
  d.workgroup_size = ts * ts;
  d.spec = {ts};
  d.tensors = {a, b, out, bias, partial};
  d.params.u32(static_cast<uint32_t>(M)).u32(static_cast<uint32_t>(N)).u32(static_cast<uint32_t>(K));
  d.params.i32(checked_stride(a.size(0) > 1 ? a.stride(0) : 0))
      .i32(checked_stride(a.stride(1)))
      .i32(checked_stride(a.stride(2)));
  d.params.i32(checked_stride(b.size(0) > 1 ? b.stride(0) : 0))
      .i32(checked_stride(b.stride(1)))
      .i32(checked_stride(b.stride(2)));
  d.params.u32(bias.defined() ? 1 : 0).u32(partial.defined() ? 1 : 0);
  const int64_t tile = ts * 4;
  d.groups_x = static_cast<uint32_t>((N + tile - 1) / tile);
  d.groups_y = static_cast<uint32_t>((M + tile - 1) / tile);
  d.groups_z = static_cast<uint32_t>(B);
  d.run();
}

void bmm_kernel(OpCall& call) {
  const Tensor& a = call.in(0);
  const Tensor& b = call.in(1);
  const Tensor bias = call.inputs.size() > 2 ? call.in(2) : Tensor();
  const Tensor partial = call.inputs.size() > 3 ? call.in(3) : Tensor();
  const Tensor& out = call.out(0);
  HEARTH_CHECK(out.dtype() == DType::float32 && a.dtype() == DType::float32 && b.dtype() == DType::float32,
               NotImplementedError, "[bmm] the Vulkan kernel takes float32 operands and output");
  gemm(a, b, out, bias, partial);
  if (call.outputs.size() > 1 && call.out(1).defined()) {
    const Tensor& sums = call.out(1);
    const int64_t K = a.size(2);
    const Tensor ones_k = ones({1, K, 1}, DType::float32, out.device());
    gemm(a.select(0, 0).unsqueeze(0), ones_k, sums.view({1, sums.numel(), 1}), Tensor(), Tensor());
  }
}

HEARTH_REGISTER_KERNEL(bmm, vulkan_kind(), bmm_kernel, {DType::float32});

}  // namespace
}  // namespace hearth::vulkan
