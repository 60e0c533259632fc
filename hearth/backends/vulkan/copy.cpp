// copy_ (strided, with dtype conversion) and fill_ on Vulkan: a dense copy of
// one dtype is a buffer copy; everything else is the elementwise kernel.
#include "hearth/dispatch/schemas/copy.h"

#include "hearth/backends/vulkan/elementwise.h"
#include "hearth/backends/vulkan/kernel_launch.h"
#include "hearth/core/device_runtime.h"
#include "hearth/dispatch/registry.h"

namespace hearth::vulkan {
namespace {

void copy_kernel(OpCall& call) {
  const Tensor& src = call.in(0);
  const Tensor& dst = call.out(0);
  if (dst.numel() == 0) return;
  HEARTH_CHECK(elementwise_dtypes().contains(dst.dtype()), NotImplementedError,
               "[copy_] the Vulkan kernel cannot write ", dtype_name(dst.dtype()), " tensors");
  if (src.dtype() == dst.dtype() && src.is_contiguous() && dst.is_contiguous()) {
    device_runtime(vulkan_kind()).copy_within(dst.data_ptr(), src.data_ptr(), dst.nbytes(), dst.device().index);
    return;
  }
  run_elementwise(EW_COPY, dst, {src}, integral_operands(dst, {src}));
}

void fill_kernel(OpCall& call) {
  const Tensor& t = call.out(0);
  const Scalar& value = call.attrs<FillAttrs>().value;
  ElementwiseScalars s;
  // The value as the tensor's dtype takes it (Scalar::to<T>): a bool is true for any non-zero.
  if (t.dtype() == DType::bool_)
    s.s0 = value.to_bool() ? 1 : 0;
  else if (t.dtype() == DType::float32)
    s.s0 = value.to<float>();
  else if (t.is_floating_point())
    s.s0 = value.to<double>();
  else
    s.s0 = value.to<int64_t>();
  run_elementwise(EW_FILL, t, {}, !t.is_floating_point(), s);
}

HEARTH_REGISTER_KERNEL(copy_, vulkan_kind(), copy_kernel, elementwise_dtypes());
HEARTH_REGISTER_KERNEL(fill_, vulkan_kind(), fill_kernel, elementwise_dtypes());

}  // namespace
}  // namespace hearth::vulkan
