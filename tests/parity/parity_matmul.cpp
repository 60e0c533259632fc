// Parity cases for bmm: batched products with a transposed operand, and
// linear's bias in the GEMM's epilogue. (linear's bias gradient in cuBLASLt's
// epilogue is tested in tests/gpu/test_linear_bias_grad_cuda.cpp.)
#include "hearth/ops/elementwise.h"
#include "hearth/ops/factory.h"
#include "hearth/ops/linalg.h"
#include "hearth/ops/nn_functional.h"
#include "hearth/ops/reduction.h"
#include "hearth/ops/view.h"
#include "tests/parity/parity.h"

namespace hearth::parity {
namespace {

const std::vector<DType> kFloat = {DType::float32, DType::float64, DType::bfloat16, DType::float16};

const ParityRegistrar bmm_case(
    {"matmul batched, transposed operand",
     {"bmm"},
     kFloat,
     [](DType dt) {
       return std::vector<Tensor>{random_input({3, 33, 47}, dt), random_input({3, 65, 47}, dt),
                                  random_input({47, 31}, dt)};
     },
     [](const std::vector<Tensor>& in, Device) {
       return std::vector<Tensor>{matmul(in[0], transpose(in[1], 1, 2)), matmul(in[0], in[2])};
     },
     true,
     5e-3});  // TF32 tensor cores for float32
// linear with a bias: the GEMM's bias epilogue (cuBLASLt), a 3-D input folded
// into rows, and a transposed (column-major) input; backward through the
// products, the bias gradient in the weight gradient's epilogue where cuBLASLt
// has one (float64: a product with ones).
const ParityRegistrar linear_case(
    {"linear + bias epilogue, 3-D and transposed",
     {"bmm"},
     kFloat,
     [](DType dt) {
       return std::vector<Tensor>{random_input({4, 37, 65}, dt), random_input({129, 65}, dt), random_input({129}, dt),
                                  random_input({65, 23}, dt)};
     },
     [](const std::vector<Tensor>& in, Device) {
       return std::vector<Tensor>{linear(in[0], in[1], in[2]), linear(transpose(in[3], 0, 1), in[1], in[2])};
     },
     true,
     5e-3});

}  // namespace
}  // namespace hearth::parity
