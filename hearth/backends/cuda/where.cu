// where (cond ? a : b) on CUDA.
#include "hearth/backends/cuda/loops.cuh"
#include "hearth/dispatch/registry.h"

namespace hearth::cuda {
namespace {

template <typename D>
struct WhereFn {
  __device__ D operator()(D a, D b, bool c) const { return c ? a : b; }
};

void where_kernel(OpCall& call) {
  const Tensor& out = call.out(0);
  activate(out.device().index);
  HEARTH_CUDA_DISPATCH_ALL(out.dtype(), "where", [&] {
    gpu_elementwise<scalar_t, scalar_t, scalar_t, bool>(out, {&call.in(0), &call.in(1), &call.in(2)},
                                                        WhereFn<scalar_t>{});
  });
}

DeviceKind cuda_kind() { return register_device_kind("cuda"); }

HEARTH_REGISTER_KERNEL(where, cuda_kind(), where_kernel, DTypeSet::all());

}  // namespace
}  // namespace hearth::cuda
