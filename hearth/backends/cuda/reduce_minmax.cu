// amax/amin and max_dim/min_dim on CUDA over dense rows [outer, inner] ->
// [outer], through the engine in row_reduce.cuh. Extremes compare in float for
// the half types, int for the narrow integers, their own type otherwise.
#include <cmath>

#include <cuda/std/limits>

#include "hearth/backends/cuda/reduce_util.cuh"
#include "hearth/backends/cuda/row_reduce.cuh"
#include "hearth/dispatch/registry.h"

namespace hearth::cuda {
namespace {

using namespace rowred;

DeviceKind cuda_kind() { return register_device_kind("cuda"); }

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

constexpr DTypeSet kAll = DTypeSet::all();
HEARTH_REGISTER_KERNEL(amax, cuda_kind(), extreme_kernel<true>, kAll);
HEARTH_REGISTER_KERNEL(amin, cuda_kind(), extreme_kernel<false>, kAll);
HEARTH_REGISTER_KERNEL(max_dim, cuda_kind(), arg_extreme_kernel<true>, kAll);
HEARTH_REGISTER_KERNEL(min_dim, cuda_kind(), arg_extreme_kernel<false>, kAll);

}  // namespace
}  // namespace hearth::cuda
