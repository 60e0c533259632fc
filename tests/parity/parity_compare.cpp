// Parity cases for the comparisons and logical_and/or/xor.
#include "hearth/ops/elementwise.h"
#include "hearth/ops/factory.h"
#include "hearth/ops/view.h"
#include "tests/parity/parity.h"

namespace hearth::parity {
namespace {

const std::vector<DType> kAll = {DType::float32, DType::float64, DType::bfloat16, DType::float16,
                                 DType::int64,   DType::int32,   DType::uint8,    DType::bool_};

const ParityRegistrar c_cmp(binary(
    "eq/ne/lt/le/gt/ge", {"eq", "ne", "lt", "le", "gt", "ge"}, kAll,
    [](const Tensor& a, const Tensor& b) {
      Tensor r = logical_and(eq(a, b), ne(a, b));
      for (Tensor t : {lt(a, b), le(a, b), gt(a, b), ge(a, b)}) r = logical_xor(r, t);
      return cat_bools(r, lt(a, b));
    },
    false));
const ParityRegistrar c_logic(binary(
    "logical_and/or/xor", {"logical_and", "logical_or", "logical_xor"}, kAll,
    [](const Tensor& a, const Tensor& b) { return logical_xor(logical_and(a, b), logical_or(a, b)); }, false));

}  // namespace
}  // namespace hearth::parity
