// clamp on CUDA, in the accumulation type (float for the half types), with the
// CPU backend's semantics.
#include "hearth/backends/cuda/loops.cuh"
#include "hearth/dispatch/registry.h"
#include "hearth/dispatch/schemas/clamp.h"

namespace hearth::cuda {
namespace {

template <typename D>
struct ClampFn {
  acc_t<D> lo, hi;
  bool has_lo, has_hi;
  __device__ D operator()(D v) const {
    acc_t<D> x = to_acc(v);
    if (has_lo && x < lo) x = lo;
    if (has_hi && x > hi) x = hi;
    return from_acc<D>(x);
  }
};

void clamp_kernel(OpCall& call) {
  const Tensor& out = call.out(0);
  activate(out.device().index);
  const ClampAttrs& at = call.attrs<ClampAttrs>();
  HEARTH_CUDA_DISPATCH_NUMERIC(out.dtype(), "clamp", [&] {
    using A = acc_t<scalar_t>;
    ClampFn<scalar_t> f{at.has_min ? at.min.to<A>() : A(0), at.has_max ? at.max.to<A>() : A(0), at.has_min, at.has_max};
    gpu_elementwise<scalar_t, scalar_t>(out, {&call.in(0)}, f);
  });
}

DeviceKind cuda_kind() { return register_device_kind("cuda"); }
const DTypeSet kNumeric = DTypeSet::floating() | DTypeSet::integral();

HEARTH_REGISTER_KERNEL(clamp, cuda_kind(), clamp_kernel, kNumeric);

}  // namespace
}  // namespace hearth::cuda
