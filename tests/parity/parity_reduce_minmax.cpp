// Parity cases for amax/amin and max_dim/min_dim: short, odd and long rows, and
// NaN and ties.
#include <cmath>

#include "hearth/ops/elementwise.h"
#include "hearth/ops/factory.h"
#include "hearth/ops/reduction.h"
#include "hearth/ops/view.h"
#include "tests/parity/parity.h"

namespace hearth::parity {
namespace {

const std::vector<DType> kFloat = {DType::float32, DType::float64, DType::bfloat16, DType::float16};
const std::vector<DType> kAll = {DType::float32, DType::float64, DType::bfloat16, DType::float16,
                                 DType::int64,   DType::int32,   DType::uint8,    DType::bool_};

std::vector<Tensor> extremes(const Tensor& x) {
  auto [mx, imx] = max_dim(x, -1);
  auto [mn, imn] = min_dim(transpose(x, 0, 1), -1, true);
  return {amax(x), amax(x, {-1}), amin(x, {0}), mx, imx, mn, imn, argmax(x, 0)};
}
const ParityRegistrar ext_odd(one_input("amax/amin/max_dim/min_dim [37,129]",
                                        {"amax", "amin", "max_dim", "min_dim", "scatter_add"}, kAll, {37, 129},
                                        extremes));
const ParityRegistrar ext_short(accelerator_scale(one_input("amax/max_dim many short rows [40001,5]",
                                                            {"amax", "amin", "max_dim", "min_dim", "scatter_add"}, kAll,
                                                            {40001, 5}, extremes)));
const ParityRegistrar ext_long(accelerator_scale(one_input("amax/max_dim long row [1,1000003]",
                                                           {"amax", "amin", "max_dim", "min_dim", "scatter_add"}, kAll,
                                                           {1, 1000003}, [](const Tensor& x) {
                                                             auto [mx, imx] = max_dim(x, 1);
                                                             auto [mn, imn] = min_dim(slice(x, 1, 1, 1000003, 2), 1);
                                                             return std::vector<Tensor>{amax(x), amin(x), mx,
                                                                                        imx,     mn,      imn};
                                                           })));
// NaN beats every number and the first NaN's index wins; ties go to the first.
const ParityRegistrar ext_nan(ParityCase{
    "amax/max_dim NaN and ties [33,517]",
    {"amax", "amin", "max_dim", "min_dim"},
    kFloat,
    [](DType dt) {
      return std::vector<Tensor>{random_input({33, 517}, dt)};
    },
    [](const std::vector<Tensor>& in, Device) {
      Tensor x = in[0].clone();
      fill_(slice(slice(x, 0, 0, 33, 3), 1, 200, 517, 101), NAN);
      fill_(slice(slice(x, 0, 1, 33, 3), 1, 7, 517, 50), 2.0);  // ties for the maximum
      auto [mx, imx] = max_dim(x, 1);
      auto [mn, imn] = min_dim(x, 1);
      return std::vector<Tensor>{amax(x, {1}), amin(x, {1}), mx, imx, mn, imn, argmax(x.reshape({1, -1}), 1)};
    },
    false});

}  // namespace
}  // namespace hearth::parity
