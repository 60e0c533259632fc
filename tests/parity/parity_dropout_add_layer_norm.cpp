// Parity cases for dropout_add_layer_norm: BERT's hidden sizes, an odd one,
// rows too long for registers, a single row, dropout on and off (the harness
// seeds both devices alike, so a mask that differed from the CPU's would show
// as a large error), and a half x beside a float32 residual stream.
#include "hearth/ops/elementwise.h"
#include "hearth/ops/factory.h"
#include "hearth/ops/nn_functional.h"
#include "hearth/ops/view.h"
#include "tests/parity/parity.h"

namespace hearth::parity {
namespace {

const std::vector<DType> kKernelDtypes = {DType::float32, DType::bfloat16, DType::float16};
const std::vector<DType> kHalf = {DType::bfloat16, DType::float16};

const ParityRegistrar dropout_add_layer_norm_case(
    {"dropout_add_layer_norm: 768, 1024, odd 769, long, p",
     {"dropout_add_layer_norm", "dropout_add_layer_norm_backward"},
     kKernelDtypes,
     [](DType dt) {
       return std::vector<Tensor>{random_input({4, 16, 768}, dt), random_input({4, 16, 768}, dt),
                                  random_input({768}, dt),        random_input({768}, dt),
                                  random_input({3, 5, 1024}, dt), random_input({3, 5, 1024}, dt),
                                  random_input({1024}, dt),       random_input({9, 769}, dt),
                                  random_input({9, 769}, dt),     random_input({769}, dt),
                                  random_input({2, 20000}, dt),   random_input({2, 20000}, dt),
                                  random_input({1, 768}, dt),     random_input({768, 1}, dt)};
     },
     [](const std::vector<Tensor>& in, Device) {
       return std::vector<Tensor>{
           dropout_add_layer_norm(in[0], in[1], {768}, in[2], in[3], 0.1, true),   // BERT-base, vector loads
           dropout_add_layer_norm(in[0], in[1], {768}, in[2], in[3], 0.1, false),  // evaluation
           dropout_add_layer_norm(in[4], in[5], {1024}, in[6], Tensor(), 0.0, true),  // BERT-large, p == 0
           dropout_add_layer_norm(in[4], in[5], {1024}, Tensor(), in[6], 0.3, true),
           dropout_add_layer_norm(in[7], in[8], {769}, in[9], in[9], 0.3, true),   // odd: scalar loads
           dropout_add_layer_norm(in[7], in[8], {769}, in[9], in[9]),
           dropout_add_layer_norm(in[10], in[11], {20000}, Tensor(), Tensor(), 0.25, true),  // not in registers
           dropout_add_layer_norm(in[12], transpose(in[13], 0, 1), {768}, in[2], in[3], 0.5, true)};  // one row
     }});

const ParityRegistrar dropout_add_layer_norm_mixed(
    {"dropout_add_layer_norm half x, float32 residual",
     {"dropout_add_layer_norm", "dropout_add_layer_norm_backward"},
     kHalf,
     [](DType dt) {
       return std::vector<Tensor>{random_input({8, 32, 768}, dt), random_input({8, 32, 768}, DType::float32),
                                  random_input({768}, DType::float32), random_input({768}, DType::float32),
                                  random_input({5, 131}, dt), random_input({5, 131}, DType::float32)};
     },
     [](const std::vector<Tensor>& in, Device) {
       return std::vector<Tensor>{dropout_add_layer_norm(in[0], in[1], {768}, in[2], in[3], 0.1, true),
                                  dropout_add_layer_norm(in[0], in[1], {768}, in[2], in[3]),
                                  dropout_add_layer_norm(in[4], in[5], {131}, narrow(in[2], 0, 0, 131),
                                                         Tensor(), 0.2, true)};
     }});

}  // namespace
}  // namespace hearth::parity
