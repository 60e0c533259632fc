// Parity cases for the random fills: uniform_, normal_ and randint_ draw the
// same Philox stream on every device.
#include "hearth/ops/elementwise.h"
#include "hearth/ops/factory.h"
#include "hearth/ops/view.h"
#include "tests/parity/parity.h"

namespace hearth::parity {
namespace {

const std::vector<DType> kFloat = {DType::float32, DType::float64, DType::bfloat16, DType::float16};

// The case's dtype travels as the dtype of a one-element input (the fills
// themselves take none); randint_ draws int64 in every run.
const ParityRegistrar random_fills({"uniform_/normal_/randint_ same stream as cpu",
                                    {"uniform_", "normal_", "randint_"},
                                    kFloat,
                                    [](DType dt) { return std::vector<Tensor>{Tensor::empty({1}, dt, Device())}; },
                                    [](const std::vector<Tensor>& in, Device d) {
                                      const DType dt = in[0].dtype();
                                      return std::vector<Tensor>{rand({1001}, dt, d), randn({777}, dt, d),
                                                                 randint(-5, 1000, {999}, DType::int64, d)};
                                    },
                                    false,
                                    1e-7});

}  // namespace
}  // namespace hearth::parity
