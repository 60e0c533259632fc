// Parity cases for sum (and mean): every shape class the launch planner tells
// apart (many short rows, one group per row, block-wide groups, long rows split
// into segments), reductions over leading, trailing and middle dims, views.
#include <cmath>

#include "hearth/ops/elementwise.h"
#include "hearth/ops/factory.h"
#include "hearth/ops/reduction.h"
#include "hearth/ops/view.h"
#include "tests/parity/parity.h"

namespace hearth::parity {
namespace {

const std::vector<DType> kSummable = {DType::float32, DType::float64, DType::bfloat16, DType::float16,
                                      DType::int64,   DType::int32,   DType::uint8};

std::vector<Tensor> sums(const Tensor& x) {
  std::vector<Tensor> r{sum(x), sum(x, {-1}), sum(x, {0}), sum(transpose(x, 0, 1), {1}, true)};
  if (x.is_floating_point()) r.push_back(mean(x, {-1}));
  return r;
}
const ParityRegistrar sum_odd(one_input("sum/mean [37,129] each dim, transposed", {"sum"}, kSummable, {37, 129}, sums));
const ParityRegistrar sum_short_rows(
    accelerator_scale(one_input("sum many short rows [65537,3]", {"sum"}, kSummable, {65537, 3}, [](const Tensor& x) {
      return std::vector<Tensor>{sum(x, {1}), sum(slice(x, 1, 0, 3, 2), {1})};
    })));
const ParityRegistrar sum_vec_rows(one_input("sum aligned rows [1031,64], [8,4096]", {"sum"}, kSummable, {1031, 64},
                                             [](const Tensor& x) {
                                               return std::vector<Tensor>{sum(x, {1}), sum(x.reshape({8, -1}), {1})};
                                             }));
const ParityRegistrar sum_long_row(
    accelerator_scale(one_input("sum long row [1,1000003]", {"sum"}, kSummable, {1, 1000003}, [](const Tensor& x) {
      std::vector<Tensor> r{sum(x, {1}), sum(slice(x, 1, 3, 1000003), {1})};
      if (x.is_floating_point()) r.push_back(mean(x));
      return r;
    })));
const ParityRegistrar sum_few_long_rows(accelerator_scale(
    one_input("sum few long rows [3,333336] middle dims", {"sum"}, kSummable, {3, 333336}, [](const Tensor& x) {
      Tensor four = x.reshape({3, 12, 27778});
      return std::vector<Tensor>{sum(x, {1}), sum(four, {0, 2}), sum(four, {1}, true)};
    })));

}  // namespace
}  // namespace hearth::parity
