// amax, amin, max_dim, min_dim over dense rows on Vulkan
// (shaders/reduce_rows.comp): NaN propagates; indices are the first occurrence.
#include "hearth/backends/vulkan/kernel_launch.h"
#include "hearth/backends/vulkan/row_reduction.h"
#include "hearth/dispatch/registry.h"

namespace hearth::vulkan {
namespace {

template <RowReduction R>
void minmax_kernel(OpCall& call) {
  const bool with_index = R == RowReduction::max_dim || R == RowReduction::min_dim;
  run_row_reduction(R, call.in(0), call.out(0), with_index ? call.out(1) : Tensor());
}

const DTypeSet kTypes = {DType::float32, DType::float64, DType::float16, DType::bfloat16, DType::int64};

HEARTH_REGISTER_KERNEL(amax, vulkan_kind(), minmax_kernel<RowReduction::amax>, kTypes);
HEARTH_REGISTER_KERNEL(amin, vulkan_kind(), minmax_kernel<RowReduction::amin>, kTypes);
HEARTH_REGISTER_KERNEL(max_dim, vulkan_kind(), minmax_kernel<RowReduction::max_dim>, kTypes);
HEARTH_REGISTER_KERNEL(min_dim, vulkan_kind(), minmax_kernel<RowReduction::min_dim>, kTypes);

}  // namespace
}  // namespace hearth::vulkan
