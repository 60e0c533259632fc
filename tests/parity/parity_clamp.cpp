// Parity cases for clamp.
#include "hearth/ops/elementwise.h"
#include "hearth/ops/factory.h"
#include "hearth/ops/view.h"
#include "tests/parity/parity.h"

namespace hearth::parity {
namespace {

const std::vector<DType> kNumeric = {DType::float32, DType::float64, DType::bfloat16, DType::float16,
                                     DType::int64,   DType::int32,   DType::uint8};

const ParityRegistrar c_clamp(unary("clamp", {"clamp"}, kNumeric,
                                    [](const Tensor& x) { return clamp(x, -0.25, 0.5); }));

}  // namespace
}  // namespace hearth::parity
