// var (and std) on CUDA over dense rows [outer, inner] -> [outer], through the
// engine in row_reduce.cuh: Welford's single pass, merged pairwise, so one read
// of the input suffices and no cancellation creeps in. Floating values
// accumulate in float (double for float64).
#include <cmath>

#include <cuda/std/limits>

#include "hearth/backends/cuda/reduce_util.cuh"
#include "hearth/backends/cuda/row_reduce.cuh"
#include "hearth/dispatch/registry.h"
#include "hearth/dispatch/schemas/reduce_var.h"

namespace hearth::cuda {
namespace {

using namespace rowred;

DeviceKind cuda_kind() { return register_device_kind("cuda"); }

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

HEARTH_REGISTER_KERNEL(var, cuda_kind(), var_kernel, DTypeSet::floating());

}  // namespace
}  // namespace hearth::cuda
