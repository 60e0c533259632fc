#include "hearth/backends/vulkan/row_reduction.h"

#include <algorithm>

#include "hearth/backends/vulkan/elementwise.h"
#include "hearth/backends/vulkan/kernel_launch.h"

namespace hearth::vulkan {

void run_row_reduction(RowReduction op, const Tensor& x, const Tensor& values, const Tensor& indices, double p) {
  const int64_t outer = values.numel();
  if (outer == 0) return;
  const int64_t inner = x.numel() / outer;
  if (inner == 0) {  // sum of empty rows (the ops layer refuses them for the others)
    run_elementwise(EW_FILL, values, {}, !values.is_floating_point());
    return;
  }
  HEARTH_CHECK(x.is_contiguous() && values.is_contiguous(), ValueError,
               "[vulkan] row reductions take dense rows (the ops layer makes them)");
  HEARTH_CHECK(outer <= 0xffffffffLL && x.numel() <= 0xffffffffLL, NotImplementedError,
               "[vulkan] row reductions take at most 2^32 - 1 elements");
  const int device = values.device().index;
  if (x.dtype() == DType::float64) require_float64(device, "reduction");
  if (x.dtype() == DType::float16 || x.dtype() == DType::bfloat16) require_float16(device, "reduction");
  const char* shader = x.dtype() == DType::int64      ? "reduce_rows_int"
                       : x.dtype() == DType::float64  ? "reduce_rows_double"
                       : x.dtype() == DType::float16  ? "reduce_rows_half"
                       : x.dtype() == DType::bfloat16 ? "reduce_rows_bfloat16"
                                                      : "reduce_rows_float";
  Dispatch d(shader, device);
  d.tensors = {x, values, indices};
  d.spec = {static_cast<uint32_t>(op)};
  d.params.u32(static_cast<uint32_t>(outer)).u32(static_cast<uint32_t>(inner)).f32(static_cast<float>(p));
  d.use_row_workgroup(inner);
  // One workgroup folds a row, each invocation looping over its share. Some
  // drivers bound a shader loop's iterations (llvmpipe stops one after 65535),
  // so a long row (BERT's 23M-element embedding gradient in a norm) takes the
  // widest workgroup the device allows: up to 1024 x 32768 elements a row.
  const int64_t per_invocation = (inner + d.workgroup_size - 1) / d.workgroup_size;
  if (per_invocation > 32768) {
    uint32_t wide = d.workgroup_size;
    while (wide * 2 <= device_limits(device).max_workgroup_size && wide < 1024) wide *= 2;
    d.workgroup_size = wide;
  }
  d.groups_x = static_cast<uint32_t>(std::min<int64_t>(outer, device_limits(d.device).max_groups_x));
  d.run();
}

}  // namespace hearth::vulkan
