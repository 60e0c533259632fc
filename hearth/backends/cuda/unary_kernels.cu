// Unary elementwise ops and activations on CUDA, with the CPU backend's
// formulas (hearth/backends/cpu/unary_kernels.cpp, activation_kernels.cpp).
#include "hearth/backends/cuda/loops.cuh"
#include "hearth/dispatch/registry.h"
#include "hearth/dispatch/schemas/activation.h"

namespace hearth::cuda {
namespace {

enum class U { neg, abs, sign, square, exp, log, sqrt, rsqrt, relu, sigmoid, tanh, silu, gelu, gelu_tanh };

template <U op, typename D>
struct UnaryFn {
  __device__ D operator()(D v) const {
    using A = acc_t<D>;
    A x = to_acc(v);
    if constexpr (op == U::neg) {
      if constexpr (std::is_unsigned_v<A>)
        return from_acc<D>(A(0) - x);
      else
        return from_acc<D>(-x);
    } else if constexpr (op == U::abs) {
      if constexpr (std::is_unsigned_v<A>)
        return v;
      else
        return from_acc<D>(x < A(0) ? -x : x);
    } else if constexpr (op == U::sign) {
      if constexpr (std::is_unsigned_v<A>)
        return from_acc<D>(A(x != 0));
      else if constexpr (std::is_floating_point_v<A>)
        return from_acc<D>(x != x ? x : A((A(0) < x) - (x < A(0))));
      else
        return from_acc<D>(A((A(0) < x) - (x < A(0))));
    } else if constexpr (op == U::square) {
      return from_acc<D>(x * x);
    } else if constexpr (op == U::relu) {
      if constexpr (std::is_unsigned_v<A>)
        return v;
      else
        return x < A(0) ? from_acc<D>(A(0)) : v;
    } else if constexpr (op == U::exp) {
      return from_acc<D>(exp(x));
    } else if constexpr (op == U::log) {
      return from_acc<D>(log(x));
    } else if constexpr (op == U::sqrt) {
      return from_acc<D>(sqrt(x));
    } else if constexpr (op == U::rsqrt) {
      return from_acc<D>(A(1) / sqrt(x));
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

enum class P { logical_not, isnan, isfinite };

template <P op, typename D>
struct PredicateFn {
  __device__ bool operator()(D v) const {
    auto x = to_acc(v);
    if constexpr (op == P::logical_not)
      return x == decltype(x)(0);
    else if constexpr (op == P::isnan)
      return x != x;
    else {
      if constexpr (std::is_floating_point_v<decltype(x)>)
        return isfinite(x);
      else
        return true;
    }
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

template <P op>
void predicate(OpCall& call) {
  const Tensor& a = call.in(0);
  activate(a.device().index);
  HEARTH_CUDA_DISPATCH_ALL(a.dtype(), "predicate",
                           [&] { gpu_elementwise<bool, scalar_t>(call.out(0), {&a}, PredicateFn<op, scalar_t>{}); });
}

DeviceKind cuda_kind() { return register_device_kind("cuda"); }
const DTypeSet kNumeric = DTypeSet::floating() | DTypeSet::integral();

HEARTH_REGISTER_KERNEL(neg, cuda_kind(), unary_numeric<U::neg>, kNumeric);
HEARTH_REGISTER_KERNEL(abs, cuda_kind(), unary_numeric<U::abs>, kNumeric);
HEARTH_REGISTER_KERNEL(sign, cuda_kind(), unary_numeric<U::sign>, kNumeric);
HEARTH_REGISTER_KERNEL(square, cuda_kind(), unary_numeric<U::square>, kNumeric);
HEARTH_REGISTER_KERNEL(relu, cuda_kind(), unary_numeric<U::relu>, kNumeric);
HEARTH_REGISTER_KERNEL(exp, cuda_kind(), unary_floating<U::exp>, DTypeSet::floating());
HEARTH_REGISTER_KERNEL(log, cuda_kind(), unary_floating<U::log>, DTypeSet::floating());
HEARTH_REGISTER_KERNEL(sqrt, cuda_kind(), unary_floating<U::sqrt>, DTypeSet::floating());
HEARTH_REGISTER_KERNEL(rsqrt, cuda_kind(), unary_floating<U::rsqrt>, DTypeSet::floating());
HEARTH_REGISTER_KERNEL(sigmoid, cuda_kind(), unary_floating<U::sigmoid>, DTypeSet::floating());
HEARTH_REGISTER_KERNEL(tanh, cuda_kind(), unary_floating<U::tanh>, DTypeSet::floating());
HEARTH_REGISTER_KERNEL(silu, cuda_kind(), unary_floating<U::silu>, DTypeSet::floating());
HEARTH_REGISTER_KERNEL(gelu, cuda_kind(), gelu_kernel, DTypeSet::floating());
HEARTH_REGISTER_KERNEL(gelu_backward, cuda_kind(), gelu_backward_kernel, DTypeSet::floating());
HEARTH_REGISTER_KERNEL(relu_backward, cuda_kind(), relu_backward_kernel, DTypeSet::floating());
HEARTH_REGISTER_KERNEL(logical_not, cuda_kind(), predicate<P::logical_not>, DTypeSet::all());
HEARTH_REGISTER_KERNEL(isnan, cuda_kind(), predicate<P::isnan>, DTypeSet::all());
HEARTH_REGISTER_KERNEL(isfinite, cuda_kind(), predicate<P::isfinite>, DTypeSet::all());

}  // namespace
}  // namespace hearth::cuda
