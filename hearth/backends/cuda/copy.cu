// copy_ (strided, with dtype conversion) and fill_ on CUDA.
#include <cstring>

#include "hearth/backends/cuda/loops.cuh"
#include "hearth/backends/cuda/tiled_transpose.cuh"
#include "hearth/core/dtype_visit.h"
#include "hearth/dispatch/registry.h"
#include "hearth/dispatch/schemas/copy.h"

namespace hearth::cuda {
namespace {

DeviceKind cuda_kind() { return register_device_kind("cuda"); }

template <typename To>
struct ConvertFn {
  template <typename From>
  __device__ To operator()(From v) const {
    return from_acc<To>(to_acc(v));
  }
};

struct SameBits {
  template <typename W>
  __device__ W operator()(W v) const {
    return v;
  }
};

// A copy within one dtype moves bits (NaN payloads included) as unsigned words
// of the element's size, so four kernels serve all eight dtypes.
void copy_same_dtype(const Tensor& dst, const Tensor& src) {
  if (try_transpose_copy(dst, src)) return;
  switch (dst.element_size()) {
    case 1:
      gpu_elementwise<uint8_t, uint8_t>(dst, {&src}, SameBits{});
      break;
    case 2:
      gpu_elementwise<uint16_t, uint16_t>(dst, {&src}, SameBits{});
      break;
    case 4:
      gpu_elementwise<uint32_t, uint32_t>(dst, {&src}, SameBits{});
      break;
    default:
      gpu_elementwise<uint64_t, uint64_t>(dst, {&src}, SameBits{});
      break;
  }
}

template <typename D>
struct ConstantFn {
  D v;
  __device__ D operator()() const { return v; }
};

void copy_kernel(OpCall& call) {
  const Tensor& src = call.in(0);
  const Tensor& dst = call.out(0);
  activate(dst.device().index);
  if (src.dtype() == dst.dtype() && src.is_contiguous() && dst.is_contiguous()) {
    HEARTH_CUDA_CHECK(cudaMemcpyAsync(dst.data_ptr(), src.data_ptr(), dst.nbytes(), cudaMemcpyDeviceToDevice,
                                      stream(dst.device().index)));
    return;
  }
  if (src.dtype() == dst.dtype()) return copy_same_dtype(dst, src);
  HEARTH_CUDA_DISPATCH_ALL(dst.dtype(), "copy_", [&] {
    using To = scalar_t;
    HEARTH_CUDA_DISPATCH_ALL(src.dtype(), "copy_",
                             [&] { gpu_elementwise<To, scalar_t>(dst, {&src}, ConvertFn<To>{}); });
  });
}

void fill_kernel(OpCall& call) {
  const Tensor& t = call.out(0);
  activate(t.device().index);
  const Scalar& value = call.attrs<FillAttrs>().value;
  visit_dtype(t.dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    using D = dev_t<T>;
    T hv = value.to<T>();
    D v;
    std::memcpy(static_cast<void*>(&v), &hv, sizeof(D));  // same bits: hearth's and CUDA's 16-bit floats share layout
    gpu_elementwise<D>(t, {}, ConstantFn<D>{v});
  });
}

HEARTH_REGISTER_KERNEL(copy_, cuda_kind(), copy_kernel, DTypeSet::all());
HEARTH_REGISTER_KERNEL(fill_, cuda_kind(), fill_kernel, DTypeSet::all());

}  // namespace
}  // namespace hearth::cuda
