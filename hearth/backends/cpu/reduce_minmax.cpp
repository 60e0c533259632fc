// amax, amin, max_dim and min_dim on the CPU over rows: input [outer, inner]
// contiguous, outputs [outer] (the shared chunking in row_reduce.h).
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

// amax / amin: the extreme value of each row; a NaN anywhere makes the result NaN.
template <bool kMax>
void extreme_kernel(OpCall& call) {
  const Tensor& x = call.in(0);
  const Tensor& out = call.out(0);
  const int64_t outer = x.shape()[0], inner = x.shape()[1];
  visit_dtype(x.dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    using C = compute_t<T>;
    const T* in = static_cast<const T*>(x.data_ptr());
    T* o = static_cast<T*>(out.data_ptr());
    auto better = [](C a, C b) { return kMax ? a > b : a < b; };
    auto combine = [&](C a, C b) { return is_nan(a) ? a : (is_nan(b) || better(b, a) ? b : a); };
    for_each_row(outer, inner, [&](int64_t r) {
      const T* row = in + r * inner;
      C best = chunked_reduce<C>(
          inner,
          [&](int64_t b, int64_t e) {
            C acc = static_cast<C>(row[b]);
            for (int64_t i = b + 1; i < e && !is_nan(acc); ++i) acc = combine(acc, static_cast<C>(row[i]));
            return acc;
          },
          combine);
      o[r] = static_cast<T>(best);
    });
  });
}

// max_dim / min_dim: value and index of the first extreme (or the first NaN).
template <bool kMax>
void arg_extreme_kernel(OpCall& call) {
  const Tensor& x = call.in(0);
  const Tensor& values = call.out(0);
  const Tensor& indices = call.out(1);
  const int64_t outer = x.shape()[0], inner = x.shape()[1];
  visit_dtype(x.dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    using C = compute_t<T>;
    using Acc = std::pair<C, int64_t>;
    const T* in = static_cast<const T*>(x.data_ptr());
    T* vo = static_cast<T*>(values.data_ptr());
    int64_t* io = static_cast<int64_t*>(indices.data_ptr());
    // `a` always comes from earlier positions than `b`, so ties keep `a`.
    auto combine = [](const Acc& a, const Acc& b) {
      if (is_nan(a.first)) return a;
      if (is_nan(b.first)) return b;
      return (kMax ? b.first > a.first : b.first < a.first) ? b : a;
    };
    for_each_row(outer, inner, [&](int64_t r) {
      const T* row = in + r * inner;
      Acc best = chunked_reduce<Acc>(
          inner,
          [&](int64_t b, int64_t e) {
            Acc acc{static_cast<C>(row[b]), b};
            for (int64_t i = b + 1; i < e && !is_nan(acc.first); ++i)
              acc = combine(acc, Acc{static_cast<C>(row[i]), i});
            return acc;
          },
          combine);
      vo[r] = static_cast<T>(best.first);
      io[r] = best.second;
    });
  });
}

constexpr DTypeSet kAll = DTypeSet::all();
HEARTH_REGISTER_CPU_KERNEL(amax, extreme_kernel<true>, kAll);
HEARTH_REGISTER_CPU_KERNEL(amin, extreme_kernel<false>, kAll);
HEARTH_REGISTER_CPU_KERNEL(max_dim, arg_extreme_kernel<true>, kAll);
HEARTH_REGISTER_CPU_KERNEL(min_dim, arg_extreme_kernel<false>, kAll);

}  // namespace
}  // namespace hearth::cpu
