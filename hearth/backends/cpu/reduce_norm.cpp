// norm on the CPU over rows: input [outer, inner] contiguous, outputs [outer]
// (the shared chunking in row_reduce.h). Magnitudes accumulate in double.
#include "hearth/dispatch/schemas/reduce_norm.h"

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

void norm_kernel(OpCall& call) {
  const Tensor& x = call.in(0);
  const Tensor& out = call.out(0);
  const double p = call.attrs<NormAttrs>().p;
  const int64_t outer = x.shape()[0], inner = x.shape()[1];
  visit_dtype(x.dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    if constexpr (std::is_floating_point_v<compute_t<T>>) {
      const T* in = static_cast<const T*>(x.data_ptr());
      T* o = static_cast<T*>(out.data_ptr());
      for_each_row(outer, inner, [&](int64_t r) {
        const T* row = in + r * inner;
        auto mag = [&](int64_t i) { return std::abs(static_cast<double>(static_cast<compute_t<T>>(row[i]))); };
        double result;
        if (std::isinf(p)) {
          const bool largest = p > 0;
          auto combine = [largest](double a, double b) {
            return std::isnan(a) ? a : (std::isnan(b) || (largest ? b > a : b < a) ? b : a);
          };
          result = chunked_reduce<double>(
              inner,
              [&](int64_t b, int64_t e) {
                double acc = mag(b);
                for (int64_t i = b + 1; i < e && !std::isnan(acc); ++i) acc = combine(acc, mag(i));
                return acc;
              },
              combine);
        } else if (p == 0) {
          result = chunked_sum<double>(inner, [&](int64_t i) { return mag(i) != 0.0 ? 1.0 : 0.0; });
        } else if (p == 1) {
          result = chunked_sum<double>(inner, mag);
        } else if (p == 2) {
          result = std::sqrt(chunked_sum<double>(inner, [&](int64_t i) {
            const double m = mag(i);
            return m * m;
          }));
        } else {
          result = std::pow(chunked_sum<double>(inner, [&](int64_t i) { return std::pow(mag(i), p); }), 1.0 / p);
        }
        o[r] = static_cast<T>(static_cast<compute_t<T>>(result));
      });
    }
  });
}

HEARTH_REGISTER_CPU_KERNEL(norm, norm_kernel, DTypeSet::floating());

}  // namespace
}  // namespace hearth::cpu
