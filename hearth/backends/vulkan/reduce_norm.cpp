// norm over dense rows on Vulkan (shaders/reduce_rows.comp): p = 2, 1, 0,
// +-inf exactly as the CPU defines them, other p through pow in float32.
#include "hearth/dispatch/schemas/reduce_norm.h"

#include <cmath>

#include "hearth/backends/vulkan/kernel_launch.h"
#include "hearth/backends/vulkan/row_reduction.h"
#include "hearth/dispatch/registry.h"

namespace hearth::vulkan {
namespace {

void norm_kernel(OpCall& call) {
  run_row_reduction(RowReduction::norm, call.in(0), call.out(0), Tensor(), call.attrs<NormAttrs>().p);
}

HEARTH_REGISTER_KERNEL(norm, vulkan_kind(), norm_kernel, {DType::float32, DType::float64});

}  // namespace
}  // namespace hearth::vulkan
