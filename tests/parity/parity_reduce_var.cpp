// Parity cases for var and std: odd, short and long rows, corrections 0 and 1.
#include <cmath>

#include "hearth/ops/elementwise.h"
#include "hearth/ops/factory.h"
#include "hearth/ops/reduction.h"
#include "hearth/ops/view.h"
#include "tests/parity/parity.h"

namespace hearth::parity {
namespace {

const std::vector<DType> kFloat = {DType::float32, DType::float64, DType::bfloat16, DType::float16};

std::vector<Tensor> variances(const Tensor& x) {
  return {var(x), var(x, {-1}), std(x, {0}, 0), var(transpose(x, 0, 1), {1}, 0, true), std(x, {-1}, 1)};
}
const ParityRegistrar var_odd(one_input("var/std [37,129] each dim, correction 0/1", {"var", "sum"}, kFloat, {37, 129},
                                        variances));
const ParityRegistrar var_short(
    one_input("var/std short rows [4099,2], [4099,1]", {"var", "sum"}, kFloat, {4099, 2}, [](const Tensor& x) {
      // A single element with correction 1 divides 0 by 0: NaN on both.
      return std::vector<Tensor>{var(x, {1}), std(x, {1}, 0), var(slice(x, 1, 0, 1), {1})};
    }));
const ParityRegistrar var_long(accelerator_scale(
    one_input("var/std long row [1,1000003] (offset)", {"var", "sum"}, kFloat, {1, 1000003}, [](const Tensor& x) {
      Tensor shifted = add(x, 3.0);  // a mean far from 0
      return std::vector<Tensor>{var(shifted), std(x, {1}), var(x, {1}, 0)};
    })));

}  // namespace
}  // namespace hearth::parity
