// Parity cases for the activations, with their backward formulas: relu,
// sigmoid, tanh, silu and gelu (erf and tanh forms).
#include "hearth/ops/elementwise.h"
#include "hearth/ops/factory.h"
#include "hearth/ops/view.h"
#include "tests/parity/parity.h"

namespace hearth::parity {
namespace {

const std::vector<DType> kFloat = {DType::float32, DType::float64, DType::bfloat16, DType::float16};
const std::vector<DType> kNumeric = {DType::float32, DType::float64, DType::bfloat16, DType::float16,
                                     DType::int64,   DType::int32,   DType::uint8};

const ParityRegistrar c_relu(unary("relu", {"relu", "relu_backward"}, kNumeric,
                                   [](const Tensor& x) { return relu(x); }));
const ParityRegistrar c_sigmoid(unary("sigmoid", {"sigmoid"}, kFloat, [](const Tensor& x) { return sigmoid(x); }));
const ParityRegistrar c_tanh(unary("tanh", {"tanh"}, kFloat, [](const Tensor& x) { return tanh(x); }));
const ParityRegistrar c_silu(unary("silu", {"silu"}, kFloat, [](const Tensor& x) { return silu(x); }));
const ParityRegistrar c_gelu(unary("gelu erf", {"gelu", "gelu_backward"}, kFloat,
                                   [](const Tensor& x) { return gelu(x); }));
const ParityRegistrar c_gelu_tanh(unary("gelu tanh", {"gelu", "gelu_backward"}, kFloat,
                                        [](const Tensor& x) { return gelu(x, "tanh"); }));

}  // namespace
}  // namespace hearth::parity
