// Comparisons and logical_and/or/xor on CUDA, with the CPU backend's semantics.
#include "hearth/backends/cuda/loops.cuh"
#include "hearth/dispatch/registry.h"

namespace hearth::cuda {
namespace {

enum class C { eq, ne, lt, le, gt, ge, land, lor, lxor };

template <C op, typename D>
struct CompareFn {
  __device__ bool operator()(D av, D bv) const {
    auto a = to_acc(av);
    auto b = to_acc(bv);
    using A = decltype(a);
    if constexpr (op == C::eq)
      return a == b;
    else if constexpr (op == C::ne)
      return a != b;
    else if constexpr (op == C::lt)
      return a < b;
    else if constexpr (op == C::le)
      return a <= b;
    else if constexpr (op == C::gt)
      return a > b;
    else if constexpr (op == C::ge)
      return a >= b;
    else if constexpr (op == C::land)
      return (a != A(0)) && (b != A(0));
    else if constexpr (op == C::lor)
      return (a != A(0)) || (b != A(0));
    else
      return (a != A(0)) != (b != A(0));
  }
};

template <C op>
void compare(OpCall& call) {
  const Tensor& a = call.in(0);
  activate(a.device().index);
  HEARTH_CUDA_DISPATCH_ALL(a.dtype(), "compare", [&] {
    gpu_elementwise<bool, scalar_t, scalar_t>(call.out(0), {&a, &call.in(1)}, CompareFn<op, scalar_t>{});
  });
}

DeviceKind cuda_kind() { return register_device_kind("cuda"); }

HEARTH_REGISTER_KERNEL(eq, cuda_kind(), compare<C::eq>, DTypeSet::all());
HEARTH_REGISTER_KERNEL(ne, cuda_kind(), compare<C::ne>, DTypeSet::all());
HEARTH_REGISTER_KERNEL(lt, cuda_kind(), compare<C::lt>, DTypeSet::all());
HEARTH_REGISTER_KERNEL(le, cuda_kind(), compare<C::le>, DTypeSet::all());
HEARTH_REGISTER_KERNEL(gt, cuda_kind(), compare<C::gt>, DTypeSet::all());
HEARTH_REGISTER_KERNEL(ge, cuda_kind(), compare<C::ge>, DTypeSet::all());
HEARTH_REGISTER_KERNEL(logical_and, cuda_kind(), compare<C::land>, DTypeSet::all());
HEARTH_REGISTER_KERNEL(logical_or, cuda_kind(), compare<C::lor>, DTypeSet::all());
HEARTH_REGISTER_KERNEL(logical_xor, cuda_kind(), compare<C::lxor>, DTypeSet::all());

}  // namespace
}  // namespace hearth::cuda
