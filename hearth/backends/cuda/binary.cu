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

// float32 a + alpha * b with b in a half dtype (schemas/binary.h): one pass
// where a cast and an add took two.
template <typename H>
struct WideningAddFn {
  float alpha;
  __device__ float operator()(float a, H b) const { return a + alpha * to_acc(b); }
};

template <BinOp op>
void binary_kernel(OpCall& call) {
  const Tensor& out = call.out(0);
  activate(out.device().index);
  Scalar alpha = 1;
  if constexpr (op == BinOp::add || op == BinOp::sub) alpha = call.attrs<AlphaAttrs>().alpha;
  if constexpr (op == BinOp::add) {
    const DType b = call.in(1).dtype();
    if (out.dtype() == DType::float32 && (b == DType::bfloat16 || b == DType::float16)) {
      const auto al = static_cast<float>(alpha.to_double());
      if (b == DType::bfloat16)
        gpu_elementwise<float, float, __nv_bfloat16>(out, {&call.in(0), &call.in(1)}, WideningAddFn<__nv_bfloat16>{al});
      else
        gpu_elementwise<float, float, __half>(out, {&call.in(0), &call.in(1)}, WideningAddFn<__half>{al});
      return;
    }
  }
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
