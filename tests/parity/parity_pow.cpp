// Parity cases for pow: a scalar exponent and tensor^tensor, integer powers
// included.
#include "hearth/ops/elementwise.h"
#include "hearth/ops/factory.h"
#include "hearth/ops/view.h"
#include "tests/parity/parity.h"

namespace hearth::parity {
namespace {

const std::vector<DType> kFloat = {DType::float32, DType::float64, DType::bfloat16, DType::float16};

const ParityRegistrar c_pow_scalar(unary("pow scalar 3", {"pow"}, kFloat, [](const Tensor& x) { return pow(x, 3); }));
const ParityRegistrar c_pow(ParityCase{
    "pow tensor^tensor",
    {"pow"},
    {DType::float32, DType::float64, DType::int64, DType::int32},
    [](DType dt) {
      Tensor base = random_input({7, 9}, dt);
      if (is_floating(dt)) base = add(abs(base), 0.5);
      Tensor e = is_floating(dt) ? random_input({9}, dt) : cast(randint(-2, 5, {9}), dt);
      return std::vector<Tensor>{base, e};
    },
    [](const std::vector<Tensor>& in, Device) { return std::vector<Tensor>{pow(in[0], in[1])}; }});

}  // namespace
}  // namespace hearth::parity
