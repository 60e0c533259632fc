// Parity cases for softmax and log_softmax, forward and backward: rows kept in
// registers and rows too long for them, 16-byte vector loads and odd widths,
// reductions along the last dim and along strided dims.
#include <cmath>

#include "hearth/ops/elementwise.h"
#include "hearth/ops/factory.h"
#include "hearth/ops/nn_functional.h"
#include "hearth/ops/view.h"
#include "tests/parity/parity.h"

namespace hearth::parity {
namespace {

const std::vector<DType> kFloat = {DType::float32, DType::float64, DType::bfloat16, DType::float16};

const std::vector<std::string> kSoftmaxOps = {"softmax", "log_softmax", "softmax_backward", "log_softmax_backward"};
const ParityRegistrar softmax_rows({"softmax last dim: odd, aligned, wide, masked", kSoftmaxOps, kFloat,
                                    [](DType dt) {
                                      return std::vector<Tensor>{
                                          random_input({37, 129}, dt), random_input({16, 256}, dt),
                                          random_input({3, 5000}, dt), random_input({2, 20000}, dt),
                                          random_input({129, 37}, dt)};
                                    },
                                    [](const std::vector<Tensor>& in, Device d) {
                                      // -inf on the first 5 columns and on all of row 2 (a fully masked row is NaN on
                                      // both devices).
                                      Tensor mask = zeros({37, 129}, in[0].dtype(), d);
                                      fill_(slice(mask, 1, 0, 5), -INFINITY);
                                      fill_(slice(mask, 0, 2, 3), -INFINITY);
                                      Tensor masked = add(in[0], mask);
                                      return std::vector<Tensor>{
                                          softmax(in[0], -1),          log_softmax(mul(in[0], 10.0), 1),
                                          softmax(in[1], 1),           log_softmax(in[1], -1),
                                          softmax(in[2], -1),          log_softmax(in[3], -1),
                                          softmax(mul(in[3], 4.0), 1), log_softmax(transpose(in[4], 0, 1), 1),
                                          softmax(masked, 1),          log_softmax(masked, 1)};
                                    }});
const ParityRegistrar softmax_cols({"softmax strided dims: middle, first", kSoftmaxOps, kFloat,
                                    [](DType dt) {
                                      return std::vector<Tensor>{random_input({4, 33, 7}, dt),
                                                                 random_input({5, 3, 70}, dt),
                                                                 random_input({65, 130}, dt)};
                                    },
                                    [](const std::vector<Tensor>& in, Device) {
                                      return std::vector<Tensor>{softmax(in[0], 1), log_softmax(in[0], 1),
                                                                 softmax(in[1], 1), log_softmax(in[1], -2),
                                                                 softmax(in[2], 0), log_softmax(mul(in[2], 6.0), 0),
                                                                 softmax(in[0], 0)};
                                    }});

}  // namespace
}  // namespace hearth::parity
