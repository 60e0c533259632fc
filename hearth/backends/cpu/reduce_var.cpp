// var (and std) on the CPU over rows: input [outer, inner] contiguous,
// outputs [outer] (the shared chunking in row_reduce.h).
#include "hearth/dispatch/schemas/reduce_var.h"

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

// Variance by two passes (mean, then squared deviations), both in double.
void var_kernel(OpCall& call) {
  const Tensor& x = call.in(0);
  const Tensor& out = call.out(0);
  const VarAttrs& attrs = call.attrs<VarAttrs>();
  const int64_t outer = x.shape()[0], inner = x.shape()[1];
  const double denom = std::max<double>(0.0, static_cast<double>(inner - attrs.correction));
  visit_dtype(x.dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    if constexpr (std::is_floating_point_v<compute_t<T>>) {
      const T* in = static_cast<const T*>(x.data_ptr());
      T* o = static_cast<T*>(out.data_ptr());
      for_each_row(outer, inner, [&](int64_t r) {
        const T* row = in + r * inner;
        auto value = [&](int64_t i) { return static_cast<double>(static_cast<compute_t<T>>(row[i])); };
        const double mean = chunked_sum<double>(inner, value) / static_cast<double>(inner);
        const double m2 = chunked_sum<double>(inner, [&](int64_t i) {
          const double d = value(i) - mean;
          return d * d;
        });
        double v = m2 / denom;
        if (attrs.take_sqrt) v = std::sqrt(v);
        o[r] = static_cast<T>(static_cast<compute_t<T>>(v));
      });
    }
  });
}

HEARTH_REGISTER_CPU_KERNEL(var, var_kernel, DTypeSet::floating());

}  // namespace
}  // namespace hearth::cpu
