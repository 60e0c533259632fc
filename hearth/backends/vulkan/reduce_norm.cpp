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
  const double p = call.attrs<NormAttrs>().p;
  // GLSL has pow for 32-bit floats only: a float64 norm of another p would
  // be float32-accurate, so it is refused rather than computed so.
  HEARTH_CHECK(call.in(0).dtype() != DType::float64 || p == 0 || p == 1 || p == 2 || std::isinf(p),
               NotImplementedError, "[norm] the Vulkan kernel computes float64 norms for p = 0, 1, 2 and +-inf only, got p = ",
               p);
  run_row_reduction(RowReduction::norm, call.in(0), call.out(0), Tensor(), p);
}

HEARTH_REGISTER_KERNEL(norm, vulkan_kind(), norm_kernel,
                       {DType::float32, DType::float64, DType::float16, DType::bfloat16});

}  // namespace
}  // namespace hearth::vulkan
