#include "hearth/backends/vulkan/gemm.h"

#include "hearth/backends/vulkan/kernel_launch.h"

namespace hearth::vulkan {
namespace {

int32_t checked_stride(int64_t s) {
  HEARTH_CHECK(s >= INT32_MIN && s <= INT32_MAX, NotImplementedError, "[vulkan] GEMM strides must fit 32 bits, got ",
               s);
  return static_cast<int32_t>(s);
}

// Invocations per side of a workgroup: 16 x 16 where the device allows, else 8 x 8.
uint32_t tile_side(int device) {
  const DeviceLimits& l = device_limits(device);
  const uint32_t ts = l.max_workgroup_size >= 256 ? 16 : 8;
  // Two ts x (4 ts) float slices in shared memory.
  return 2u * ts * ts * 4u * 4u <= l.max_shared_bytes ? ts : 8;
}

}  // namespace

void run_gemm(const Tensor& a, const Tensor& b, const Tensor& out, const Tensor& bias, const Tensor& partial) {
  const int64_t B = a.size(0), M = a.size(1), K = a.size(2), N = b.size(2);
  const std::vector<Tensor> operands = {a, b, out, bias, partial};
  bool any_half = false;
  for (const Tensor& t : operands) {
    const bool half = t.defined() && (t.dtype() == DType::float16 || t.dtype() == DType::bfloat16);
    HEARTH_CHECK(!t.defined() || t.dtype() == DType::float32 || half, NotImplementedError,
                 "[vulkan] the GEMM takes float32, float16 and bfloat16 operands, got ", dtype_name(t.dtype()));
    any_half = any_half || half;
  }
  if (any_half) require_float16(out.device().index, "GEMM");
  Dispatch d(any_half ? "gemm_half" : "gemm", out.device().index);
  const uint32_t ts = tile_side(d.device);
  d.workgroup_size = ts * ts;
  d.spec = {ts};
  for (const Tensor& t : operands) d.spec.push_back(static_cast<uint32_t>(t.defined() ? t.dtype() : DType::float32));
  d.tensors = operands;
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

}  // namespace hearth::vulkan
