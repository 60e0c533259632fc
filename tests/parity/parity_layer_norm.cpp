// Parity cases for layer_norm, forward and backward: affine or not, wide rows,
// transposed inputs, half inputs beside float32 parameters.
#include <cmath>

#include "hearth/ops/elementwise.h"
#include "hearth/ops/factory.h"
#include "hearth/ops/nn_functional.h"
#include "hearth/ops/view.h"
#include "tests/parity/parity.h"

namespace hearth::parity {
namespace {

const std::vector<DType> kFloat = {DType::float32, DType::float64, DType::bfloat16, DType::float16};
const std::vector<DType> kHalf = {DType::bfloat16, DType::float16};

const ParityRegistrar layer_norm_case({"layer_norm: affine, none, weight only, wide, transposed",
                                       {"layer_norm", "layer_norm_backward"},
                                       kFloat,
                                       [](DType dt) {
                                         return std::vector<Tensor>{
                                             random_input({37, 129}, dt),  random_input({129}, dt),
                                             random_input({129}, dt),      random_input({4, 8, 64}, dt),
                                             random_input({3, 20000}, dt), random_input({20000}, dt),
                                             random_input({129, 37}, dt),  random_input({300, 96}, dt),
                                             random_input({96}, dt),       random_input({96}, dt)};
                                       },
                                       [](const std::vector<Tensor>& in, Device) {
                                         return std::vector<Tensor>{
                                             layer_norm(in[0], {129}, in[1], in[2]), layer_norm(in[3], {8, 64}),
                                             layer_norm(in[4], {20000}, in[5], Tensor()),
                                             layer_norm(transpose(in[6], 0, 1), {129}, Tensor(), in[2], 1e-3),
                                             layer_norm(add(in[7], 5.0), {96}, in[8], in[9])};
                                       }});
const ParityRegistrar layer_norm_mixed({"layer_norm half input, float32 weight and bias",
                                        {"layer_norm", "layer_norm_backward"},
                                        kHalf,
                                        [](DType dt) {
                                          return std::vector<Tensor>{random_input({33, 96}, dt),
                                                                     random_input({96}, DType::float32),
                                                                     random_input({96}, DType::float32)};
                                        },
                                        [](const std::vector<Tensor>& in, Device) {
                                          return std::vector<Tensor>{layer_norm(in[0], {96}, in[1], in[2])};
                                        }});

}  // namespace
}  // namespace hearth::parity
