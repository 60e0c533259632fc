// pow on CUDA, with the CPU backend's semantics (integer powers by squaring,
// wrapping like the CPU's).
#include "hearth/backends/cuda/loops.cuh"
#include "hearth/dispatch/registry.h"

namespace hearth::cuda {
namespace {

template <typename D>
struct PowFn {
  __device__ D operator()(D av, D bv) const {
    using A = acc_t<D>;
    A base = to_acc(av), e = to_acc(bv);
    if constexpr (std::is_floating_point_v<A>) {
      return from_acc<D>(pow(base, e));
    } else {
      if constexpr (std::is_signed_v<A>) {
        if (e < 0) {
          if (base == 1) return D(1);
          if (base == -1) return (e & 1) ? D(-1) : D(1);
          return D(0);
        }
      }
      using U = std::make_unsigned_t<A>;
      U r = 1, b = static_cast<U>(base);  // unsigned arithmetic wraps like the CPU's wrapping_mul
      while (e > 0) {
        if (e & 1) r = static_cast<U>(r * b);
        b = static_cast<U>(b * b);
        e = static_cast<A>(e >> 1);
      }
      return static_cast<D>(r);
    }
  }
};

void pow_kernel(OpCall& call) {
  const Tensor& out = call.out(0);
  activate(out.device().index);
  HEARTH_CUDA_DISPATCH_NUMERIC(out.dtype(), "pow", [&] {
    gpu_elementwise<scalar_t, scalar_t, scalar_t>(out, {&call.in(0), &call.in(1)}, PowFn<scalar_t>{});
  });
}

DeviceKind cuda_kind() { return register_device_kind("cuda"); }
const DTypeSet kNumeric = DTypeSet::floating() | DTypeSet::integral();

HEARTH_REGISTER_KERNEL(pow, cuda_kind(), pow_kernel, kNumeric);

}  // namespace
}  // namespace hearth::cuda
