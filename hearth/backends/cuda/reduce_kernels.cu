// Row reductions on CUDA (contracts in hearth/dispatch/schemas/reduce_*.h):
// sum, amax/amin, max_dim/min_dim, var/std and norm over dense rows
// [outer, inner] -> [outer], all through the engine in row_reduce.cuh.
// Floating values accumulate in float (double for float64), integers in int64
// (sum) or their own type (extremes). var is Welford's single pass, merged
// pairwise, so one read of the input suffices and no cancellation creeps in.
#include <cmath>

#include <cuda/std/limits>

#include "hearth/backends/cuda/row_reduce.cuh"
#include "hearth/dispatch/registry.h"
#include "hearth/dispatch/schemas/reduce_norm.h"
#include "hearth/dispatch/schemas/reduce_var.h"

namespace hearth::cuda {
namespace {

DeviceKind cuda_kind() { return register_device_kind("cuda"); }

// Type extremes are compared in: float for the half types, int for the narrow
// integers (warp shuffles need 32 bits at least), the element type otherwise.
template <typename D>
struct RedOf {
  using type = acc_t<D>;
};
template <>
struct RedOf<bool> {
  using type = int;
};
template <>
struct RedOf<uint8_t> {
  using type = int;
};
template <typename D>
using red_t = typename RedOf<D>::type;

template <typename A>
__device__ __forceinline__ bool dev_isnan(A v) {
  if constexpr (std::is_floating_point_v<A>) return v != v;
  else return false;
}
template <typename A>
__device__ __forceinline__ A dev_abs(A v) {
  if constexpr (std::is_same_v<A, double>) return ::fabs(v);
  else return ::fabsf(v);
}
template <typename A>
__device__ __forceinline__ A dev_sqrt(A v) {
  if constexpr (std::is_same_v<A, double>) return ::sqrt(v);
  else return ::sqrtf(v);
}
template <typename A>
__device__ __forceinline__ A dev_pow(A v, A p) {
  if constexpr (std::is_same_v<A, double>) return ::pow(v, p);
  else return ::powf(v, p);
}
template <typename A>
__device__ __forceinline__ A shfl(A v, int mask) {
  return __shfl_xor_sync(0xffffffffu, v, mask);
}

// The worst value for a max (kMax) or a min, so any element replaces it.
template <typename A, bool kMax>
__device__ __forceinline__ A worst() {
  using L = ::cuda::std::numeric_limits<A>;
  if constexpr (std::is_floating_point_v<A>) return kMax ? -L::infinity() : L::infinity();
  else return kMax ? L::lowest() : L::max();
}

// The better of two values; NaN wins, as on the CPU.
template <bool kMax, typename A>
__device__ __forceinline__ A pick(A a, A b) {
  if (dev_isnan(a)) return a;
  if (dev_isnan(b)) return b;
  return (kMax ? b > a : b < a) ? b : a;
}

template <typename D>
struct SumReducer {
  using In = D;
  using State = acc_t<D>;
  D* out;
  __device__ State init() const { return State(0); }
  __device__ void add(State& s, D v, int64_t) const { s += to_acc(v); }
  __device__ State combine(State a, State b) const { return a + b; }
  __device__ static State shfl_xor(State s, int m) { return shfl(s, m); }
  __device__ void finish(int64_t row, State s) const { out[row] = from_acc<D>(s); }
};

template <typename D, bool kMax>
struct ExtremeReducer {
  using In = D;
  using State = red_t<D>;
  D* out;
  __device__ State init() const { return worst<State, kMax>(); }
  __device__ void add(State& s, D v, int64_t) const { s = pick<kMax>(s, static_cast<State>(to_acc(v))); }
  __device__ State combine(State a, State b) const { return pick<kMax>(a, b); }
  __device__ static State shfl_xor(State s, int m) { return shfl(s, m); }
  __device__ void finish(int64_t row, State s) const { out[row] = from_acc<D>(s); }
};

template <typename A>
struct ValueIndex {
  A v;
  int64_t i;
};

// The extreme with its column: the first NaN, else the best value, ties going
// to the lower column. That order is total, so combining in any order agrees.
template <typename D, bool kMax>
struct ArgExtremeReducer {
  using In = D;
  using A = red_t<D>;
  using State = ValueIndex<A>;
  D* values;
  int64_t* indices;
  __device__ State init() const { return {worst<A, kMax>(), ::cuda::std::numeric_limits<int64_t>::max()}; }
  __device__ State combine(State a, State b) const {
    const bool an = dev_isnan(a.v), bn = dev_isnan(b.v);
    if (an || bn) {
      if (an && bn) return a.i < b.i ? a : b;
      return an ? a : b;
    }
    if (a.v == b.v) return a.i < b.i ? a : b;
    return (kMax ? b.v > a.v : b.v < a.v) ? b : a;
  }
  __device__ void add(State& s, D v, int64_t col) const { s = combine(s, State{static_cast<A>(to_acc(v)), col}); }
  __device__ static State shfl_xor(State s, int m) { return {shfl(s.v, m), shfl(s.i, m)}; }
  __device__ void finish(int64_t row, State s) const {
    values[row] = from_acc<D>(s.v);
    indices[row] = s.i;
  }
};

template <typename A>
struct Moments {
  A mean, m2;
  int64_t n;
};

template <typename D>
struct VarReducer {
  using In = D;
  using A = acc_t<D>;
  using State = Moments<A>;
  D* out;
  A denom;  // max(0, inner - correction)
  bool take_sqrt;
  __device__ State init() const { return {A(0), A(0), 0}; }
  __device__ void add(State& s, D v, int64_t) const {
    const A x = to_acc(v);
    s.n += 1;
    const A d = x - s.mean;
    s.mean += d / static_cast<A>(s.n);
    s.m2 += d * (x - s.mean);
  }
  __device__ State combine(State a, State b) const {
    if (a.n == 0) return b;
    if (b.n == 0) return a;
    const int64_t n = a.n + b.n;
    const A d = b.mean - a.mean, fb = static_cast<A>(b.n) / static_cast<A>(n);
    return {a.mean + d * fb, a.m2 + b.m2 + d * d * static_cast<A>(a.n) * fb, n};
  }
  __device__ static State shfl_xor(State s, int m) { return {shfl(s.mean, m), shfl(s.m2, m), shfl(s.n, m)}; }
  __device__ void finish(int64_t row, State s) const {
    const A v = s.m2 / denom;  // 0 / 0 is NaN for an empty or too short row, as on the CPU
    out[row] = from_acc<D>(take_sqrt ? dev_sqrt(v) : v);
  }
};

enum class NormMode : int { max_abs, min_abs, count_nonzero, sum_abs, sum_squares, sum_powers };

template <typename D>
struct NormReducer {
  using In = D;
  using State = acc_t<D>;
  D* out;
  NormMode mode;
  State p;
  __device__ State init() const {
    return mode == NormMode::min_abs ? worst<State, false>() : State(0);
  }
  __device__ void add(State& s, D v, int64_t) const {
    const State m = dev_abs(to_acc(v));
    switch (mode) {
      case NormMode::max_abs: s = pick<true>(s, m); break;
      case NormMode::min_abs: s = pick<false>(s, m); break;
      case NormMode::count_nonzero: s += m != State(0) ? State(1) : State(0); break;
      case NormMode::sum_abs: s += m; break;
      case NormMode::sum_squares: s += m * m; break;
      case NormMode::sum_powers: s += dev_pow(m, p); break;
    }
  }
  __device__ State combine(State a, State b) const {
    if (mode == NormMode::max_abs) return pick<true>(a, b);
    if (mode == NormMode::min_abs) return pick<false>(a, b);
    return a + b;
  }
  __device__ static State shfl_xor(State s, int m) { return shfl(s, m); }
  __device__ void finish(int64_t row, State s) const {
    if (mode == NormMode::sum_squares) s = dev_sqrt(s);
    else if (mode == NormMode::sum_powers) s = dev_pow(s, State(1) / p);
    out[row] = from_acc<D>(s);
  }
};

struct RowsOf {
  const Tensor& x;
  int64_t outer, inner;
};

RowsOf rows_of(OpCall& call) {
  const Tensor& x = call.in(0);
  activate(x.device().index);
  return {x, x.shape()[0], x.shape()[1]};
}

void sum_kernel(OpCall& call) {
  const RowsOf r = rows_of(call);
  switch (r.x.dtype()) {
    HEARTH_CUDA_FLOATING_CASES([&] {
      rowred::reduce_rows(SumReducer<scalar_t>{static_cast<scalar_t*>(call.out(0).data_ptr())}, r.x, r.outer, r.inner);
    })
    HEARTH_CUDA_CASE(DType::int64, int64_t, [&] {
      rowred::reduce_rows(SumReducer<scalar_t>{static_cast<scalar_t*>(call.out(0).data_ptr())}, r.x, r.outer, r.inner);
    })
    HEARTH_CUDA_UNSUPPORTED("sum", r.x.dtype())
  }
}

template <bool kMax>
void extreme_kernel(OpCall& call) {
  const RowsOf r = rows_of(call);
  HEARTH_CUDA_DISPATCH_ALL(r.x.dtype(), kMax ? "amax" : "amin", [&] {
    rowred::reduce_rows(ExtremeReducer<scalar_t, kMax>{static_cast<scalar_t*>(call.out(0).data_ptr())}, r.x, r.outer,
                        r.inner);
  });
}

template <bool kMax>
void arg_extreme_kernel(OpCall& call) {
  const RowsOf r = rows_of(call);
  HEARTH_CUDA_DISPATCH_ALL(r.x.dtype(), kMax ? "max_dim" : "min_dim", [&] {
    rowred::reduce_rows(ArgExtremeReducer<scalar_t, kMax>{static_cast<scalar_t*>(call.out(0).data_ptr()),
                                                          static_cast<int64_t*>(call.out(1).data_ptr())},
                        r.x, r.outer, r.inner);
  });
}

void var_kernel(OpCall& call) {
  const RowsOf r = rows_of(call);
  const VarAttrs& attrs = call.attrs<VarAttrs>();
  const double denom = std::max<double>(0.0, static_cast<double>(r.inner - attrs.correction));
  HEARTH_CUDA_DISPATCH_FLOATING(r.x.dtype(), "var", [&] {
    using A = acc_t<scalar_t>;
    rowred::reduce_rows(
        VarReducer<scalar_t>{static_cast<scalar_t*>(call.out(0).data_ptr()), static_cast<A>(denom), attrs.take_sqrt},
        r.x, r.outer, r.inner);
  });
}

NormMode norm_mode(double p) {
  if (std::isinf(p)) return p > 0 ? NormMode::max_abs : NormMode::min_abs;
  if (p == 0) return NormMode::count_nonzero;
  if (p == 1) return NormMode::sum_abs;
  if (p == 2) return NormMode::sum_squares;
  return NormMode::sum_powers;
}

void norm_kernel(OpCall& call) {
  const RowsOf r = rows_of(call);
  const double p = call.attrs<NormAttrs>().p;
  HEARTH_CUDA_DISPATCH_FLOATING(r.x.dtype(), "norm", [&] {
    using A = acc_t<scalar_t>;
    rowred::reduce_rows(NormReducer<scalar_t>{static_cast<scalar_t*>(call.out(0).data_ptr()), norm_mode(p),
                                              static_cast<A>(p)},
                        r.x, r.outer, r.inner);
  });
}

constexpr DTypeSet kAll = DTypeSet::all();
HEARTH_REGISTER_KERNEL(sum, cuda_kind(), sum_kernel, DTypeSet::floating() | DTypeSet{DType::int64});
HEARTH_REGISTER_KERNEL(amax, cuda_kind(), extreme_kernel<true>, kAll);
HEARTH_REGISTER_KERNEL(amin, cuda_kind(), extreme_kernel<false>, kAll);
HEARTH_REGISTER_KERNEL(max_dim, cuda_kind(), arg_extreme_kernel<true>, kAll);
HEARTH_REGISTER_KERNEL(min_dim, cuda_kind(), arg_extreme_kernel<false>, kAll);
HEARTH_REGISTER_KERNEL(var, cuda_kind(), var_kernel, DTypeSet::floating());
HEARTH_REGISTER_KERNEL(norm, cuda_kind(), norm_kernel, DTypeSet::floating());

}  // namespace
}  // namespace hearth::cuda
