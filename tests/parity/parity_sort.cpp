// Parity cases for sort and topk: along rows and columns, both directions,
// through a transposed view. The values are distinct (a permutation of
// 0..202, exact in every dtype), so the indices are the same on every device
// whatever order a kernel leaves ties in.
#include "hearth/ops/elementwise.h"
#include "hearth/ops/factory.h"
#include "hearth/ops/reduction.h"
#include "hearth/ops/view.h"
#include "tests/parity/parity.h"

namespace hearth::parity {
namespace {

const std::vector<DType> kSortable = {DType::float32, DType::float64, DType::bfloat16,
                                      DType::float16, DType::int64,   DType::int32};

// 0..202 permuted (i * 37 mod 203) as [7, 29].
Tensor distinct_values(DType dt) {
  std::vector<int64_t> v(203);
  for (int64_t i = 0; i < 203; ++i) v[static_cast<size_t>(i)] = i * 37 % 203;
  return cast(tensor(v, {7, 29}), dt);
}

const ParityRegistrar sort_case({"sort rows, columns descending, transposed",
                                 {"sort"},
                                 kSortable,
                                 [](DType dt) { return std::vector<Tensor>{distinct_values(dt)}; },
                                 [](const std::vector<Tensor>& in, Device) {
                                   auto [rows, rows_at] = sort(in[0], 1);
                                   auto [cols, cols_at] = sort(in[0], 0, true);
                                   auto [tr, tr_at] = sort(transpose(in[0], 0, 1), 1);
                                   return std::vector<Tensor>{rows, rows_at, cols, cols_at, tr, tr_at};
                                 }});

const ParityRegistrar topk_case({"topk largest and smallest, rows and columns",
                                 {"topk"},
                                 kSortable,
                                 [](DType dt) { return std::vector<Tensor>{distinct_values(dt)}; },
                                 [](const std::vector<Tensor>& in, Device) {
                                   auto [large, large_at] = topk(in[0], 5, 1);
                                   auto [small, small_at] = topk(in[0], 3, 0, false);
                                   return std::vector<Tensor>{large, large_at, small, small_at};
                                 }});

}  // namespace
}  // namespace hearth::parity
