// sum on the CPU over rows: input [outer, inner] contiguous, outputs [outer]
// (the shared chunking in row_reduce.h). Floating values accumulate in double.
#include <cmath>
#include <limits>
#include <utility>
#include <vector>

#include "hearth/backends/cpu/level_kernel_registrar.h"
#include "hearth/backends/cpu/row_reduce.h"
#include "hearth/core/dtype_visit.h"

namespace hearth::cpu {
namespace {

using namespace row_reduce;

void sum_kernel(OpCall& call) {
  const Tensor& x = call.in(0);
  const Tensor& out = call.out(0);
  const int64_t outer = x.shape()[0], inner = x.shape()[1];
  visit_dtype(x.dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    using A = acc_t<T>;
    const T* in = static_cast<const T*>(x.data_ptr());
    T* o = static_cast<T*>(out.data_ptr());
    for_each_row(outer, inner, [&](int64_t r) {
      const T* row = in + r * inner;
      A total = chunked_sum<A>(inner, [&](int64_t i) { return static_cast<A>(static_cast<compute_t<T>>(row[i])); });
      o[r] = static_cast<T>(static_cast<compute_t<T>>(total));
    });
  });
}

HEARTH_REGISTER_CPU_KERNEL(sum, sum_kernel, DTypeSet::floating() | DTypeSet{DType::int64});

}  // namespace
}  // namespace hearth::cpu
