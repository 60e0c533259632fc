// Comparisons, logical ops, maximum/minimum (NaN-propagating), where, clamp and
// pow on CUDA, with the CPU backend's semantics.
#include "hearth/backends/cuda/loops.cuh"
#include "hearth/dispatch/registry.h"
#include "hearth/dispatch/schemas/clamp.h"

namespace hearth::cuda {
namespace {

enum class C { eq, ne, lt, le, gt, ge, land, lor, lxor };

template <C op, typename D>
struct CompareFn {
  __device__ bool operator()(D av, D bv) const {
    auto a = to_acc(av);
    auto b = to_acc(bv);
    using A = decltype(a);
    if constexpr (op == C::eq) return a == b;
    else if constexpr (op == C::ne) return a != b;
    else if constexpr (op == C::lt) return a < b;
    else if constexpr (op == C::le) return a <= b;
    else if constexpr (op == C::gt) return a > b;
    else if constexpr (op == C::ge) return a >= b;
    else if constexpr (op == C::land) return (a != A(0)) && (b != A(0));
    else if constexpr (op == C::lor) return (a != A(0)) || (b != A(0));
    else return (a != A(0)) != (b != A(0));
  }
};

template <bool is_max, typename D>
struct ExtremumFn {
  __device__ D operator()(D av, D bv) const {
    auto a = to_acc(av);
    auto b = to_acc(bv);
    if constexpr (std::is_floating_point_v<decltype(a)>) {
      if (a != a) return av;
      if (b != b) return bv;
    }
    if constexpr (is_max) return a >= b ? av : bv;
    else return a <= b ? av : bv;
  }
};

template <typename D>
struct WhereFn {
  __device__ D operator()(D a, D b, bool c) const { return c ? a : b; }
};

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

template <C op>
void compare(OpCall& call) {
  const Tensor& a = call.in(0);
  activate(a.device().index);
  HEARTH_CUDA_DISPATCH_ALL(a.dtype(), "compare", [&] {
    gpu_elementwise<bool, scalar_t, scalar_t>(call.out(0), {&a, &call.in(1)}, CompareFn<op, scalar_t>{});
  });
}

template <bool is_max>
void extremum(OpCall& call) {
  const Tensor& out = call.out(0);
  activate(out.device().index);
  HEARTH_CUDA_DISPATCH_ALL(out.dtype(), "maximum", [&] {
    gpu_elementwise<scalar_t, scalar_t, scalar_t>(out, {&call.in(0), &call.in(1)}, ExtremumFn<is_max, scalar_t>{});
  });
}

void where_kernel(OpCall& call) {
  const Tensor& out = call.out(0);
  activate(out.device().index);
  HEARTH_CUDA_DISPATCH_ALL(out.dtype(), "where", [&] {
    gpu_elementwise<scalar_t, scalar_t, scalar_t, bool>(out, {&call.in(0), &call.in(1), &call.in(2)},
                                                        WhereFn<scalar_t>{});
  });
}

void clamp_kernel(OpCall& call) {
  const Tensor& out = call.out(0);
  activate(out.device().index);
  const ClampAttrs& at = call.attrs<ClampAttrs>();
  HEARTH_CUDA_DISPATCH_NUMERIC(out.dtype(), "clamp", [&] {
    using A = acc_t<scalar_t>;
    ClampFn<scalar_t> f{at.has_min ? at.min.to<A>() : A(0), at.has_max ? at.max.to<A>() : A(0), at.has_min,
                        at.has_max};
    gpu_elementwise<scalar_t, scalar_t>(out, {&call.in(0)}, f);
  });
}

void pow_kernel(OpCall& call) {
  const Tensor& out = call.out(0);
  activate(out.device().index);
  HEARTH_CUDA_DISPATCH_NUMERIC(out.dtype(), "pow", [&] {
    gpu_elementwise<scalar_t, scalar_t, scalar_t>(out, {&call.in(0), &call.in(1)}, PowFn<scalar_t>{});
  });
}

DeviceKind cuda_kind() { return register_device_kind("cuda"); }
const DTypeSet kNumeric = DTypeSet::floating() | DTypeSet::integral();

HEARTH_REGISTER_KERNEL(eq, cuda_kind(), compare<C::eq>, DTypeSet::all());
HEARTH_REGISTER_KERNEL(ne, cuda_kind(), compare<C::ne>, DTypeSet::all());
HEARTH_REGISTER_KERNEL(lt, cuda_kind(), compare<C::lt>, DTypeSet::all());
HEARTH_REGISTER_KERNEL(le, cuda_kind(), compare<C::le>, DTypeSet::all());
HEARTH_REGISTER_KERNEL(gt, cuda_kind(), compare<C::gt>, DTypeSet::all());
HEARTH_REGISTER_KERNEL(ge, cuda_kind(), compare<C::ge>, DTypeSet::all());
HEARTH_REGISTER_KERNEL(logical_and, cuda_kind(), compare<C::land>, DTypeSet::all());
HEARTH_REGISTER_KERNEL(logical_or, cuda_kind(), compare<C::lor>, DTypeSet::all());
HEARTH_REGISTER_KERNEL(logical_xor, cuda_kind(), compare<C::lxor>, DTypeSet::all());
HEARTH_REGISTER_KERNEL(maximum, cuda_kind(), extremum<true>, DTypeSet::all());
HEARTH_REGISTER_KERNEL(minimum, cuda_kind(), extremum<false>, DTypeSet::all());
HEARTH_REGISTER_KERNEL(where, cuda_kind(), where_kernel, DTypeSet::all());
HEARTH_REGISTER_KERNEL(clamp, cuda_kind(), clamp_kernel, kNumeric);
HEARTH_REGISTER_KERNEL(pow, cuda_kind(), pow_kernel, kNumeric);

}  // namespace
}  // namespace hearth::cuda
