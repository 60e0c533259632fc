// Unary elementwise math and the bool-valued predicates on CUDA, with the CPU
// backend's formulas (hearth/backends/cpu/unary.cpp).
#include "hearth/backends/cuda/loops.cuh"
#include "hearth/dispatch/registry.h"

namespace hearth::cuda {
namespace {

enum class U { neg, abs, sign, square, exp, log, sqrt, rsqrt };

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
    } else if constexpr (op == U::exp) {
      return from_acc<D>(exp(x));
    } else if constexpr (op == U::log) {
      return from_acc<D>(log(x));
    } else if constexpr (op == U::sqrt) {
      return from_acc<D>(sqrt(x));
    } else {  // rsqrt
      return from_acc<D>(A(1) / sqrt(x));
    }
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
HEARTH_REGISTER_KERNEL(exp, cuda_kind(), unary_floating<U::exp>, DTypeSet::floating());
HEARTH_REGISTER_KERNEL(log, cuda_kind(), unary_floating<U::log>, DTypeSet::floating());
HEARTH_REGISTER_KERNEL(sqrt, cuda_kind(), unary_floating<U::sqrt>, DTypeSet::floating());
HEARTH_REGISTER_KERNEL(rsqrt, cuda_kind(), unary_floating<U::rsqrt>, DTypeSet::floating());
HEARTH_REGISTER_KERNEL(logical_not, cuda_kind(), predicate<P::logical_not>, DTypeSet::all());
HEARTH_REGISTER_KERNEL(isnan, cuda_kind(), predicate<P::isnan>, DTypeSet::all());
HEARTH_REGISTER_KERNEL(isfinite, cuda_kind(), predicate<P::isfinite>, DTypeSet::all());

}  // namespace
}  // namespace hearth::cuda
