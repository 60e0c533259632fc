// maximum and minimum on CUDA, NaN-propagating, with the CPU backend's semantics.
#include "hearth/backends/cuda/loops.cuh"
#include "hearth/dispatch/registry.h"

namespace hearth::cuda {
namespace {

template <bool is_max, typename D>
struct ExtremumFn {
  __device__ D operator()(D av, D bv) const {
    auto a = to_acc(av);
    auto b = to_acc(bv);
    if constexpr (std::is_floating_point_v<decltype(a)>) {
      if (a != a) return av;
      if (b != b) return bv;
    }
    if constexpr (is_max)
      return a >= b ? av : bv;
    else
      return a <= b ? av : bv;
  }
};

template <bool is_max>
void extremum(OpCall& call) {
  const Tensor& out = call.out(0);
  activate(out.device().index);
  HEARTH_CUDA_DISPATCH_ALL(out.dtype(), "maximum", [&] {
    gpu_elementwise<scalar_t, scalar_t, scalar_t>(out, {&call.in(0), &call.in(1)}, ExtremumFn<is_max, scalar_t>{});
  });
}

DeviceKind cuda_kind() { return register_device_kind("cuda"); }

HEARTH_REGISTER_KERNEL(maximum, cuda_kind(), extremum<true>, DTypeSet::all());
HEARTH_REGISTER_KERNEL(minimum, cuda_kind(), extremum<false>, DTypeSet::all());

}  // namespace
}  // namespace hearth::cuda
