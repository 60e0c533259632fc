// Parity cases for dropout: the same Philox mask as the CPU.
#include <cmath>

#include "hearth/ops/elementwise.h"
#include "hearth/ops/factory.h"
#include "hearth/ops/nn_functional.h"
#include "hearth/ops/view.h"
#include "tests/parity/parity.h"

namespace hearth::parity {
namespace {

const std::vector<DType> kFloat = {DType::float32, DType::float64, DType::bfloat16, DType::float16};

const ParityRegistrar dropout_case(
    {"dropout: odd length, 2-D, transposed, several p",
     {"dropout", "dropout_backward"},
     kFloat,
     [](DType dt) {
       return std::vector<Tensor>{random_input({1001}, dt), random_input({64, 33}, dt), random_input({33, 64}, dt)};
     },
     [](const std::vector<Tensor>& in, Device) {
       return std::vector<Tensor>{dropout(in[0], 0.3), dropout(in[1], 0.5), dropout(transpose(in[2], 0, 1), 0.1),
                                  dropout(in[1], 0.9), dropout(slice(in[0], 0, 3, 1001), 0.25)};
     },
     true,
     1e-7});

}  // namespace
}  // namespace hearth::parity
