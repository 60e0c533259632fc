// Activations and their dedicated backwards on CUDA, with the CPU backend's
// formulas (hearth/backends/cpu/activation.cpp).
#include "hearth/backends/cuda/loops.cuh"
#include "hearth/dispatch/registry.h"
#include "hearth/dispatch/schemas/activation.h"

namespace hearth::cuda {
namespace {

enum class U { relu, sigmoid, tanh, silu, gelu, gelu_tanh };

template <U op, typename D>
struct UnaryFn {
  __device__ D operator()(D v) const {
    using A = acc_t<D>;
    A x = to_acc(v);
    if constexpr (op == U::relu) {
      if constexpr (std::is_unsigned_v<A>)
        return v;
      else
        return x < A(0) ? from_acc<D>(A(0)) : v;
    } else if constexpr (op == U::sigmoid) {
      return from_acc<D>(A(1) / (A(1) + exp(-x)));
    } else if constexpr (op == U::tanh) {
      return from_acc<D>(tanh(x));
    } else if constexpr (op == U::silu) {
      return from_acc<D>(x / (A(1) + exp(-x)));
    } else if constexpr (op == U::gelu) {
      return from_acc<D>(A(0.5) * x * (A(1) + erf(x * A(0.70710678118654752440))));
    } else {  // gelu_tanh
      A inner = A(0.79788456080286535588) * (x + A(0.044715) * x * x * x);
      return from_acc<D>(A(0.5) * x * (A(1) + tanh(inner)));
    }
  }
};

template <typename D>
struct GeluBackwardFn {
  bool tanh_form;
  __device__ D operator()(D gv, D xv) const {
    using A = acc_t<D>;
    A x = to_acc(xv), g = to_acc(gv), d;
    if (tanh_form) {
      A inner = A(0.79788456080286535588) * (x + A(0.044715) * x * x * x);
      A t = tanh(inner);
      A d_inner = A(0.79788456080286535588) * (A(1) + A(3) * A(0.044715) * x * x);
      d = A(0.5) * (A(1) + t) + A(0.5) * x * (A(1) - t * t) * d_inner;
    } else {
      A cdf = A(0.5) * (A(1) + erf(x * A(0.70710678118654752440)));
      A pdf = A(0.39894228040143267794) * exp(A(-0.5) * x * x);
      d = cdf + x * pdf;
    }
    return from_acc<D>(g * d);
  }
};

template <U op>
void unary_numeric(OpCall& call) {
  const Tensor& out = call.out(0);
  activate(out.device().index);
  HEARTH_CUDA_DISPATCH_NUMERIC(
      out.dtype(), "unary", [&] { gpu_elementwise<scalar_t, scalar_t>(out, {&call.in(0)}, UnaryFn<op, scalar_t>{}); });
}

template <U op>
void unary_floating(OpCall& call) {
  const Tensor& out = call.out(0);
  activate(out.device().index);
  HEARTH_CUDA_DISPATCH_FLOATING(
      out.dtype(), "unary", [&] { gpu_elementwise<scalar_t, scalar_t>(out, {&call.in(0)}, UnaryFn<op, scalar_t>{}); });
}

void gelu_kernel(OpCall& call) {
  if (call.attrs<GeluAttrs>().tanh_approximation)
    unary_floating<U::gelu_tanh>(call);
  else
    unary_floating<U::gelu>(call);
}

void gelu_backward_kernel(OpCall& call) {
  const Tensor& out = call.out(0);
  activate(out.device().index);
  bool tanh_form = call.attrs<GeluAttrs>().tanh_approximation;
  HEARTH_CUDA_DISPATCH_FLOATING(out.dtype(), "gelu_backward", [&] {
    gpu_elementwise<scalar_t, scalar_t, scalar_t>(out, {&call.in(0), &call.in(1)}, GeluBackwardFn<scalar_t>{tanh_form});
  });
}

template <typename D>
struct ReluBackwardFn {
  __device__ D operator()(D g, D y) const { return to_acc(y) > acc_t<D>(0) ? g : from_acc<D>(acc_t<D>(0)); }
};

void relu_backward_kernel(OpCall& call) {
  const Tensor& out = call.out(0);
  activate(out.device().index);
  HEARTH_CUDA_DISPATCH_FLOATING(out.dtype(), "relu_backward", [&] {
    gpu_elementwise<scalar_t, scalar_t, scalar_t>(out, {&call.in(0), &call.in(1)}, ReluBackwardFn<scalar_t>{});
  });
}

DeviceKind cuda_kind() { return register_device_kind("cuda"); }
const DTypeSet kNumeric = DTypeSet::floating() | DTypeSet::integral();

HEARTH_REGISTER_KERNEL(relu, cuda_kind(), unary_numeric<U::relu>, kNumeric);
HEARTH_REGISTER_KERNEL(sigmoid, cuda_kind(), unary_floating<U::sigmoid>, DTypeSet::floating());
HEARTH_REGISTER_KERNEL(tanh, cuda_kind(), unary_floating<U::tanh>, DTypeSet::floating());
HEARTH_REGISTER_KERNEL(silu, cuda_kind(), unary_floating<U::silu>, DTypeSet::floating());
HEARTH_REGISTER_KERNEL(gelu, cuda_kind(), gelu_kernel, DTypeSet::floating());
HEARTH_REGISTER_KERNEL(gelu_backward, cuda_kind(), gelu_backward_kernel, DTypeSet::floating());
HEARTH_REGISTER_KERNEL(relu_backward, cuda_kind(), relu_backward_kernel, DTypeSet::floating());

}  // namespace
}  // namespace hearth::cuda
