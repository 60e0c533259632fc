// sum on CUDA over dense rows [outer, inner] -> [outer], through the engine in
// row_reduce.cuh. Floating values accumulate in float (double for float64),
// integers in int64.
#include <cmath>

#include <cuda/std/limits>

#include "hearth/backends/cuda/reduce_util.cuh"
#include "hearth/backends/cuda/row_reduce.cuh"
#include "hearth/dispatch/registry.h"

namespace hearth::cuda {
namespace {

using namespace rowred;

DeviceKind cuda_kind() { return register_device_kind("cuda"); }

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

void sum_kernel(OpCall& call) {
  const RowsOf r = rows_of(call);
  HEARTH_CUDA_DISPATCH_IN((DTypeSet::floating() | DTypeSet{DType::int64}), r.x.dtype(), "sum", [&] {
    rowred::reduce_rows(SumReducer<scalar_t>{static_cast<scalar_t*>(call.out(0).data_ptr())}, r.x, r.outer, r.inner);
  });
}

HEARTH_REGISTER_KERNEL(sum, cuda_kind(), sum_kernel, DTypeSet::floating() | DTypeSet{DType::int64});

}  // namespace
}  // namespace hearth::cuda
