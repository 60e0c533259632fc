// Activations on the CPU: relu, sigmoid, tanh, silu, gelu (erf or tanh form)
// and gelu's derivative, which backward needs as a kernel because erf is not
// an op of its own.
#include "hearth/dispatch/schemas/activation.h"

#include <cmath>

#include "hearth/backends/cpu/elementwise_util.h"
#include "hearth/backends/cpu/level_kernel_registrar.h"
#include "hearth/backends/cpu/strided_loop.h"

namespace hearth::cpu {
namespace {

template <typename C>
struct GeluConstants {
  static constexpr C kInvSqrt2 = C(0.70710678118654752440);
  static constexpr C kInvSqrt2Pi = C(0.39894228040143267794);  // 1 / sqrt(2 pi)
  static constexpr C kSqrt2OverPi = C(0.79788456080286535588);
  static constexpr C kCubic = C(0.044715);
};

template <typename C>
C gelu(C x, bool tanh_form) {
  using K = GeluConstants<C>;
  if (tanh_form) {
    C inner = K::kSqrt2OverPi * (x + K::kCubic * x * x * x);
    return C(0.5) * x * (C(1) + std::tanh(inner));
  }
  return C(0.5) * x * (C(1) + std::erf(x * K::kInvSqrt2));
}

template <typename C>
C gelu_derivative(C x, bool tanh_form) {
  using K = GeluConstants<C>;
  if (tanh_form) {
    C inner = K::kSqrt2OverPi * (x + K::kCubic * x * x * x);
    C t = std::tanh(inner);
    C d_inner = K::kSqrt2OverPi * (C(1) + C(3) * K::kCubic * x * x);
    return C(0.5) * (C(1) + t) + C(0.5) * x * (C(1) - t * t) * d_inner;
  }
  C cdf = C(0.5) * (C(1) + std::erf(x * K::kInvSqrt2));
  C pdf = K::kInvSqrt2Pi * std::exp(C(-0.5) * x * x);
  return cdf + x * pdf;
}

template <typename C>
C sigmoid(C x) {
  return C(1) / (C(1) + std::exp(-x));
}

// out = fn(a) over the floating dtypes, computing in compute_t.
template <typename Fn>
void floating_unary(OpCall& call, Fn fn) {
  const Tensor& out = call.out(0);
  visit_floating(out.dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    using C = compute_t<T>;
    unary_loop<T, T>(out, call.in(0), [&](T x) { return static_cast<T>(fn(static_cast<C>(x))); });
  });
}

void relu_kernel(OpCall& call) {
  const Tensor& out = call.out(0);
  visit_numeric(out.dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    using C = compute_t<T>;
    // NaN stays NaN: the comparison is false for it.
    unary_loop<T, T>(out, call.in(0), [](T x) {
      if constexpr (std::is_unsigned_v<C>)
        return x;
      else
        return static_cast<C>(x) < C(0) ? T(C(0)) : x;
    });
  });
}

void sigmoid_kernel(OpCall& call) {
  floating_unary(call, [](auto x) { return sigmoid(x); });
}

void tanh_kernel(OpCall& call) {
  floating_unary(call, [](auto x) { return std::tanh(x); });
}

void silu_kernel(OpCall& call) {
  floating_unary(call, [](auto x) { return x * sigmoid(x); });
}

void gelu_kernel(OpCall& call) {
  const bool tanh_form = call.attrs<GeluAttrs>().tanh_approximation;
  floating_unary(call, [tanh_form](auto x) { return gelu(x, tanh_form); });
}

void gelu_backward_kernel(OpCall& call) {
  const bool tanh_form = call.attrs<GeluAttrs>().tanh_approximation;
  const Tensor& out = call.out(0);
  visit_floating(out.dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    using C = compute_t<T>;
    binary_loop<T, T, T>(out, call.in(0), call.in(1), [tanh_form](T g, T x) {
      return static_cast<T>(static_cast<C>(g) * gelu_derivative(static_cast<C>(x), tanh_form));
    });
  });
}

void relu_backward_kernel(OpCall& call) {
  const Tensor& out = call.out(0);
  visit_floating(out.dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    using C = compute_t<T>;
    binary_loop<T, T, T>(out, call.in(0), call.in(1),
                         [](T g, T y) { return static_cast<C>(y) > C(0) ? g : static_cast<T>(C(0)); });
  });
}

HEARTH_REGISTER_CPU_KERNEL(relu, relu_kernel, DTypeSet::floating() | DTypeSet::integral());
HEARTH_REGISTER_CPU_KERNEL(relu_backward, relu_backward_kernel, DTypeSet::floating());
HEARTH_REGISTER_CPU_KERNEL(sigmoid, sigmoid_kernel, DTypeSet::floating());
HEARTH_REGISTER_CPU_KERNEL(tanh, tanh_kernel, DTypeSet::floating());
HEARTH_REGISTER_CPU_KERNEL(silu, silu_kernel, DTypeSet::floating());
HEARTH_REGISTER_CPU_KERNEL(gelu, gelu_kernel, DTypeSet::floating());
HEARTH_REGISTER_CPU_KERNEL(gelu_backward, gelu_backward_kernel, DTypeSet::floating());

}  // namespace
}  // namespace hearth::cpu
