// add, sub, mul, div on CUDA; arithmetic in float for the half types.
#include "hearth/backends/cuda/loops.cuh"
#include "hearth/dispatch/registry.h"
#include "hearth/dispatch/schemas/binary.h"

namespace hearth::cuda {
namespace {

DeviceKind cuda_kind() { return register_device_kind("cuda"); }

enum class BinOp { add, sub, mul, div };

template <BinOp op, typename D>
struct BinaryFn {
  acc_t<D> alpha;
  __device__ D operator()(D x, D y) const {
    if constexpr (std::is_same_v<D, bool>) {
      if constexpr (op == BinOp::add)
        return x || y;
      else if constexpr (op == BinOp::sub)
        return x != y;
      else
        return x && y;
    } else {
      acc_t<D> a = to_acc(x), b = to_acc(y);
      if constexpr (op == BinOp::add)
        return from_acc<D>(a + alpha * b);
      else if constexpr (op == BinOp::sub)
        return from_acc<D>(a - alpha * b);
      else if constexpr (op == BinOp::mul)
        return from_acc<D>(a * b);
      else
        return from_acc<D>(a / b);
    }
  }
};

template <BinOp op>
void binary_kernel(OpCall& call) {
  const Tensor& out = call.out(0);
  activate(out.device().index);
  Scalar alpha = 1;
  if constexpr (op == BinOp::add || op == BinOp::sub) alpha = call.attrs<AlphaAttrs>().alpha;
  HEARTH_CUDA_DISPATCH_ALL(out.dtype(), "binary", [&] {
    using A = acc_t<scalar_t>;
    A al = std::is_floating_point_v<A> ? static_cast<A>(alpha.to_double()) : static_cast<A>(alpha.to_int());
    gpu_elementwise<scalar_t, scalar_t, scalar_t>(out, {&call.in(0), &call.in(1)}, BinaryFn<op, scalar_t>{al});
  });
}

HEARTH_REGISTER_KERNEL(add, cuda_kind(), binary_kernel<BinOp::add>, DTypeSet::all());
HEARTH_REGISTER_KERNEL(sub, cuda_kind(), binary_kernel<BinOp::sub>, DTypeSet::all());
HEARTH_REGISTER_KERNEL(mul, cuda_kind(), binary_kernel<BinOp::mul>, DTypeSet::all());
HEARTH_REGISTER_KERNEL(div, cuda_kind(), binary_kernel<BinOp::div>, DTypeSet::floating());

}  // namespace
}  // namespace hearth::cuda
