// sort and topk on the CPU over dense rows [outer, n], one row per task. Values
// are compared in their compute type with NaN above every number, and equal
// values keep their original order, so both results are deterministic.
#include "hearth/dispatch/schemas/sort.h"

#include <algorithm>
#include <cmath>
#include <numeric>
#include <vector>

#include "hearth/backends/cpu/parallel.h"
#include "hearth/core/dtype_visit.h"
#include "hearth/dispatch/registry.h"

namespace hearth::cpu {
namespace {

template <typename C>
bool is_nan(C v) {
  if constexpr (std::is_floating_point_v<C>)
    return std::isnan(v);
  else
    return false;
}

// Strict "a comes before b" on values: ascending with NaN last, or descending
// with NaN first.
template <typename C>
bool before(C a, C b, bool descending) {
  if (descending) return !is_nan(b) && (is_nan(a) || a > b);
  return !is_nan(a) && (is_nan(b) || a < b);
}

// Runs fn(row values in compute type, order buffer, row index) for every row.
template <typename T, typename F>
void for_each_row_sorted(const Tensor& x, F&& fn) {
  using C = compute_t<T>;
  const int64_t outer = x.shape()[0], n = x.shape()[1];
  const T* in = static_cast<const T*>(x.data_ptr());
  parallel_for(outer, std::max<int64_t>(1, 4096 / std::max<int64_t>(n, 1)), [&](int64_t b, int64_t e) {
    std::vector<C> vals(n);
    std::vector<int64_t> order(n);
    for (int64_t r = b; r < e; ++r) {
      for (int64_t i = 0; i < n; ++i) vals[i] = static_cast<C>(in[r * n + i]);
      std::iota(order.begin(), order.end(), int64_t{0});
      fn(vals, order, r);
    }
  });
}

void sort_kernel(OpCall& call) {
  const Tensor& x = call.in(0);
  const bool descending = call.attrs<SortAttrs>().descending;
  const int64_t n = x.shape()[1];
  visit_dtype(x.dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    using C = compute_t<T>;
    T* vo = static_cast<T*>(call.out(0).data_ptr());
    int64_t* io = static_cast<int64_t*>(call.out(1).data_ptr());
    for_each_row_sorted<T>(x, [&](const std::vector<C>& vals, std::vector<int64_t>& order, int64_t r) {
      std::stable_sort(order.begin(), order.end(),
                       [&](int64_t i, int64_t j) { return before(vals[i], vals[j], descending); });
      const T* row = static_cast<const T*>(x.data_ptr()) + r * n;
      for (int64_t i = 0; i < n; ++i) {
        vo[r * n + i] = row[order[i]];
        io[r * n + i] = order[i];
      }
    });
  });
}

void topk_kernel(OpCall& call) {
  const Tensor& x = call.in(0);
  const TopkAttrs& attrs = call.attrs<TopkAttrs>();
  const int64_t n = x.shape()[1], k = attrs.k;
  visit_dtype(x.dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    using C = compute_t<T>;
    T* vo = static_cast<T*>(call.out(0).data_ptr());
    int64_t* io = static_cast<int64_t*>(call.out(1).data_ptr());
    for_each_row_sorted<T>(x, [&](const std::vector<C>& vals, std::vector<int64_t>& order, int64_t r) {
      // Breaking ties by index makes the order total, so partial_sort is deterministic.
      std::partial_sort(order.begin(), order.begin() + k, order.end(), [&](int64_t i, int64_t j) {
        if (before(vals[i], vals[j], attrs.largest)) return true;
        if (before(vals[j], vals[i], attrs.largest)) return false;
        return i < j;
      });
      const T* row = static_cast<const T*>(x.data_ptr()) + r * n;
      for (int64_t i = 0; i < k; ++i) {
        vo[r * k + i] = row[order[i]];
        io[r * k + i] = order[i];
      }
    });
  });
}

HEARTH_REGISTER_KERNEL(sort, kCpu, sort_kernel, DTypeSet::all());
HEARTH_REGISTER_KERNEL(topk, kCpu, topk_kernel, DTypeSet::all());

}  // namespace
}  // namespace hearth::cpu
