// Parity cases for the random fills: uniform_, normal_ and randint_ draw the
// same Philox stream on every device.
#include "hearth/ops/elementwise.h"
#include "hearth/ops/factory.h"
#include "hearth/ops/view.h"
#include "tests/parity/parity.h"

namespace hearth::parity {
namespace {

const std::vector<DType> kFloat = {DType::float32, DType::float64, DType::bfloat16, DType::float16};

const ParityRegistrar random_fills({"uniform_/normal_/randint_ same stream as cpu",
                                    {"uniform_", "normal_", "randint_"},
                                    kFloat,
                                    [](DType) { return std::vector<Tensor>{}; },
                                    [](const std::vector<Tensor>&, Device d) {
                                      return std::vector<Tensor>{
                                          rand({1001}, DType::float32, d), randn({777}, DType::float64, d),
                                          randn({513}, DType::bfloat16, d), randint(-5, 1000, {999}, DType::int64, d)};
                                    },
                                    false,
                                    1e-7});

}  // namespace
}  // namespace hearth::parity
