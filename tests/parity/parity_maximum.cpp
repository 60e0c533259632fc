// Parity cases for maximum and minimum (NaN-propagating).
#include "hearth/ops/elementwise.h"
#include "hearth/ops/factory.h"
#include "hearth/ops/view.h"
#include "tests/parity/parity.h"

namespace hearth::parity {
namespace {

const std::vector<DType> kAll = {DType::float32, DType::float64, DType::bfloat16, DType::float16,
                                 DType::int64,   DType::int32,   DType::uint8,    DType::bool_};

const ParityRegistrar c_max(binary("maximum", {"maximum"}, kAll,
                                   [](const Tensor& a, const Tensor& b) { return maximum(a, b); }));
const ParityRegistrar c_min(binary("minimum", {"minimum"}, kAll,
                                   [](const Tensor& a, const Tensor& b) { return minimum(a, b); }));

}  // namespace
}  // namespace hearth::parity
