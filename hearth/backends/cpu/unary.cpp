// Unary math on the CPU: neg, abs, sign, square, exp, log, sqrt, rsqrt, and the
// bool-valued logical_not, isnan, isfinite. The half types compute in float.
#include <cmath>

#include "hearth/backends/cpu/elementwise_util.h"
#include "hearth/backends/cpu/level_kernel_registrar.h"
#include "hearth/backends/cpu/strided_loop.h"
#include "hearth/core/dtype_visit.h"

namespace hearth::cpu {
namespace {

// out = fn(a) in out's dtype; make(TypeTag<C>) returns fn for compute type C.
template <typename Visit, typename Make>
void same_type_unary(OpCall& call, Visit visit, Make make) {
  const Tensor& out = call.out(0);
  visit(out.dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    using C = compute_t<T>;
    auto fn = make(TypeTag<C>{});
    unary_loop<T, T>(out, call.in(0), [&](T x) { return static_cast<T>(fn(static_cast<C>(x))); });
  });
}

template <typename Make>
void numeric_unary(OpCall& call, Make make) {
  same_type_unary(
      call, [](DType t, auto&& f) { visit_numeric(t, f); }, make);
}

template <typename Make>
void floating_unary(OpCall& call, Make make) {
  same_type_unary(
      call, [](DType t, auto&& f) { visit_floating(t, f); }, make);
}

// out (bool) = pred(a) for any input dtype.
template <typename Pred>
void predicate_unary(OpCall& call, Pred pred) {
  const Tensor& a = call.in(0);
  visit_dtype(a.dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    using C = compute_t<T>;
    unary_loop<bool, T>(call.out(0), a, [&](T x) { return pred(static_cast<C>(x)); });
  });
}

void neg_kernel(OpCall& call) {
  numeric_unary(call, [](auto tag) {
    using C = typename decltype(tag)::type;
    if constexpr (std::is_integral_v<C>)
      return [](C x) { return wrapping_neg(x); };
    else
      return [](C x) { return -x; };
  });
}

void abs_kernel(OpCall& call) {
  numeric_unary(call, [](auto tag) {
    using C = typename decltype(tag)::type;
    if constexpr (std::is_unsigned_v<C>)
      return [](C x) { return x; };
    else if constexpr (std::is_integral_v<C>)
      return [](C x) { return x < 0 ? wrapping_neg(x) : x; };
    else
      return [](C x) { return std::abs(x); };
  });
}

// NaN maps to 0, as (0 < x) - (x < 0) does.
void sign_kernel(OpCall& call) {
  numeric_unary(call, [](auto tag) {
    using C = typename decltype(tag)::type;
    if constexpr (std::is_unsigned_v<C>)
      return [](C x) { return static_cast<C>(x != 0); };
    else
      return [](C x) { return static_cast<C>(static_cast<int>(C(0) < x) - static_cast<int>(x < C(0))); };
  });
}

void square_kernel(OpCall& call) {
  numeric_unary(call, [](auto tag) {
    using C = typename decltype(tag)::type;
    if constexpr (std::is_integral_v<C>)
      return [](C x) { return wrapping_mul(x, x); };
    else
      return [](C x) { return x * x; };
  });
}

void exp_kernel(OpCall& call) {
  floating_unary(call, [](auto tag) {
    using C = typename decltype(tag)::type;
    return [](C x) { return std::exp(x); };
  });
}

void log_kernel(OpCall& call) {
  floating_unary(call, [](auto tag) {
    using C = typename decltype(tag)::type;
    return [](C x) { return std::log(x); };
  });
}

void sqrt_kernel(OpCall& call) {
  floating_unary(call, [](auto tag) {
    using C = typename decltype(tag)::type;
    return [](C x) { return std::sqrt(x); };
  });
}

void rsqrt_kernel(OpCall& call) {
  floating_unary(call, [](auto tag) {
    using C = typename decltype(tag)::type;
    return [](C x) { return C(1) / std::sqrt(x); };
  });
}

void logical_not_kernel(OpCall& call) {
  predicate_unary(call, [](auto x) { return x == decltype(x)(0); });
}

void isnan_kernel(OpCall& call) {
  predicate_unary(call, [](auto x) { return is_nan(x); });
}

void isfinite_kernel(OpCall& call) {
  predicate_unary(call, [](auto x) {
    if constexpr (std::is_floating_point_v<decltype(x)>)
      return std::isfinite(x);
    else
      return true;
  });
}

constexpr DTypeSet kNumeric = DTypeSet::floating() | DTypeSet::integral();

HEARTH_REGISTER_CPU_KERNEL(neg, neg_kernel, kNumeric);
HEARTH_REGISTER_CPU_KERNEL(abs, abs_kernel, kNumeric);
HEARTH_REGISTER_CPU_KERNEL(sign, sign_kernel, kNumeric);
HEARTH_REGISTER_CPU_KERNEL(square, square_kernel, kNumeric);
HEARTH_REGISTER_CPU_KERNEL(exp, exp_kernel, DTypeSet::floating());
HEARTH_REGISTER_CPU_KERNEL(log, log_kernel, DTypeSet::floating());
HEARTH_REGISTER_CPU_KERNEL(sqrt, sqrt_kernel, DTypeSet::floating());
HEARTH_REGISTER_CPU_KERNEL(rsqrt, rsqrt_kernel, DTypeSet::floating());
HEARTH_REGISTER_CPU_KERNEL(logical_not, logical_not_kernel, DTypeSet::all());
HEARTH_REGISTER_CPU_KERNEL(isnan, isnan_kernel, DTypeSet::all());
HEARTH_REGISTER_CPU_KERNEL(isfinite, isfinite_kernel, DTypeSet::all());

}  // namespace
}  // namespace hearth::cpu
