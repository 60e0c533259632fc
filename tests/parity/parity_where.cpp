// Parity cases for where.
#include "hearth/ops/elementwise.h"
#include "hearth/ops/factory.h"
#include "hearth/ops/view.h"
#include "tests/parity/parity.h"

namespace hearth::parity {
namespace {

const std::vector<DType> kAll = {DType::float32, DType::float64, DType::bfloat16, DType::float16,
                                 DType::int64,   DType::int32,   DType::uint8,    DType::bool_};

const ParityRegistrar c_where(binary("where", {"where"}, kAll,
                                     [](const Tensor& a, const Tensor& b) { return where(gt(a, b), a, b); }));

}  // namespace
}  // namespace hearth::parity
