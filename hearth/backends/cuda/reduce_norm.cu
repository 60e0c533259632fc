// norm on CUDA over dense rows [outer, inner] -> [outer], through the engine in
// row_reduce.cuh. Magnitudes accumulate in float (double for float64).
#include <cmath>

#include <cuda/std/limits>

#include "hearth/backends/cuda/reduce_util.cuh"
#include "hearth/backends/cuda/row_reduce.cuh"
#include "hearth/dispatch/registry.h"
#include "hearth/dispatch/schemas/reduce_norm.h"

namespace hearth::cuda {
namespace {

using namespace rowred;

DeviceKind cuda_kind() { return register_device_kind("cuda"); }

enum class NormMode : int { max_abs, min_abs, count_nonzero, sum_abs, sum_squares, sum_powers };

template <typename D>
struct NormReducer {
  using In = D;
  using State = acc_t<D>;
  D* out;
  NormMode mode;
  State p;
  __device__ State init() const { return mode == NormMode::min_abs ? worst<State, false>() : State(0); }
  __device__ void add(State& s, D v, int64_t) const {
    const State m = dev_abs(to_acc(v));
    switch (mode) {
      case NormMode::max_abs:
        s = pick<true>(s, m);
        break;
      case NormMode::min_abs:
        s = pick<false>(s, m);
        break;
      case NormMode::count_nonzero:
        s += m != State(0) ? State(1) : State(0);
        break;
      case NormMode::sum_abs:
        s += m;
        break;
      case NormMode::sum_squares:
        s += m * m;
        break;
      case NormMode::sum_powers:
        s += dev_pow(m, p);
        break;
    }
  }
  __device__ State combine(State a, State b) const {
    if (mode == NormMode::max_abs) return pick<true>(a, b);
    if (mode == NormMode::min_abs) return pick<false>(a, b);
    return a + b;
  }
  __device__ static State shfl_xor(State s, int m) { return shfl(s, m); }
  __device__ void finish(int64_t row, State s) const {
    if (mode == NormMode::sum_squares)
      s = dev_sqrt(s);
    else if (mode == NormMode::sum_powers)
      s = dev_pow(s, State(1) / p);
    out[row] = from_acc<D>(s);
  }
};

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
    rowred::reduce_rows(
        NormReducer<scalar_t>{static_cast<scalar_t*>(call.out(0).data_ptr()), norm_mode(p), static_cast<A>(p)}, r.x,
        r.outer, r.inner);
  });
}

HEARTH_REGISTER_KERNEL(norm, cuda_kind(), norm_kernel, DTypeSet::floating());

}  // namespace
}  // namespace hearth::cuda
