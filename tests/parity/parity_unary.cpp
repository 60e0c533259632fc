// Parity cases for the unary math (neg, abs, sign, square, exp, log, sqrt,
// rsqrt) and the predicates logical_not, isnan and isfinite.
#include "hearth/ops/elementwise.h"
#include "hearth/ops/factory.h"
#include "hearth/ops/view.h"
#include "tests/parity/parity.h"

namespace hearth::parity {
namespace {

const std::vector<DType> kFloat = {DType::float32, DType::float64, DType::bfloat16, DType::float16};
const std::vector<DType> kNumeric = {DType::float32, DType::float64, DType::bfloat16, DType::float16,
                                     DType::int64,   DType::int32,   DType::uint8};
const std::vector<DType> kAll = {DType::float32, DType::float64, DType::bfloat16, DType::float16,
                                 DType::int64,   DType::int32,   DType::uint8,    DType::bool_};

const ParityRegistrar c_neg(unary("neg", {"neg"}, kNumeric, [](const Tensor& x) { return neg(x); }));
const ParityRegistrar c_abs(unary("abs", {"abs", "sign", "mul"}, kNumeric, [](const Tensor& x) { return abs(x); }));
const ParityRegistrar c_sign(unary(
    "sign", {"sign"}, kNumeric, [](const Tensor& x) { return sign(x); }, false, false));
const ParityRegistrar c_square(unary("square", {"square"}, kNumeric, [](const Tensor& x) { return square(x); }));
const ParityRegistrar c_exp(unary("exp", {"exp"}, kFloat, [](const Tensor& x) { return exp(x); }));
const ParityRegistrar c_log(unary(
    "log", {"log"}, kFloat, [](const Tensor& x) { return log(x); }, true));
const ParityRegistrar c_sqrt(unary(
    "sqrt", {"sqrt"}, kFloat, [](const Tensor& x) { return sqrt(x); }, true));
const ParityRegistrar c_rsqrt(unary(
    "rsqrt", {"rsqrt"}, kFloat, [](const Tensor& x) { return rsqrt(x); }, true));
const ParityRegistrar c_pred(unary(
    "logical_not/isnan/isfinite", {"logical_not", "isnan", "isfinite"}, kAll,
    [](const Tensor& x) { return logical_or(logical_not(x), logical_or(isnan(x), isfinite(x))); }, false, false));

}  // namespace
}  // namespace hearth::parity
