// Parity cases for cumsum (its gradient is the reverse scan): odd, aligned,
// long rows and long lines.
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

std::vector<Tensor> cumsums(const Tensor& x) {
  return {cumsum(x, 1), cumsum(x, 0), cumsum(transpose(x, 0, 1), 1), cumsum(slice(x, 1, 1, 129, 2), 1)};
}
const ParityRegistrar cumsum_odd(one_input("cumsum [37,129] rows, columns, views", {"cumsum"}, kSummable, {37, 129},
                                           cumsums));
const ParityRegistrar cumsum_aligned(
    one_input("cumsum aligned rows [257,1024], short rows", {"cumsum"}, kSummable, {257, 1024}, [](const Tensor& x) {
      return std::vector<Tensor>{cumsum(x, 1), cumsum(x.reshape({-1, 4}), 1), cumsum(slice(x, 1, 0, 5), 1)};
    }));
const ParityRegistrar cumsum_long(accelerator_scale(
    one_input("cumsum long row [1,1000003], [2,262144]", {"cumsum"}, kSummable, {1, 1000003}, [](const Tensor& x) {
      Tensor aligned = slice(x, 1, 0, 524288).reshape({2, 262144});
      return std::vector<Tensor>{cumsum(x, 1), cumsum(aligned, 1)};
    })));
const ParityRegistrar cumsum_lines(accelerator_scale(one_input(
    "cumsum long lines [3,100000,2], [1,18181,33]", {"cumsum"}, kSummable, {3, 100000, 2}, [](const Tensor& x) {
      Tensor wide = slice(x.reshape({-1}), 0, 0, 18181 * 33).reshape({1, 18181, 33});
      return std::vector<Tensor>{cumsum(x, 1), cumsum(wide, 1), cumsum(x, 0)};
    })));

}  // namespace
}  // namespace hearth::parity
