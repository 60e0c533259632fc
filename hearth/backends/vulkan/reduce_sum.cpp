// sum over dense rows on Vulkan (shaders/reduce_rows.comp): float32 and float16 in float32,
// integers (which arrive as int64) in int64.
#include "hearth/backends/vulkan/kernel_launch.h"
#include "hearth/backends/vulkan/row_reduction.h"
#include "hearth/dispatch/registry.h"

namespace hearth::vulkan {
namespace {

void sum_kernel(OpCall& call) { run_row_reduction(RowReduction::sum, call.in(0), call.out(0), Tensor()); }

HEARTH_REGISTER_KERNEL(sum, vulkan_kind(), sum_kernel,
                       {DType::float32, DType::float64, DType::float16, DType::bfloat16, DType::int64});

}  // namespace
}  // namespace hearth::vulkan
