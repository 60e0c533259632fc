// Parity cases for attention_softmax: scale, mask, softmax and dropout in one
// pass; the same mask as the CPU.
#include <cmath>

#include "hearth/ops/attention.h"
#include "hearth/ops/elementwise.h"
#include "hearth/ops/factory.h"
#include "hearth/ops/view.h"
#include "tests/parity/parity.h"

namespace hearth::parity {
namespace {

const std::vector<DType> kFloat = {DType::float32, DType::float64, DType::bfloat16, DType::float16};

const ParityRegistrar attention_softmax_case(
    {"attention_softmax: BERT mask, odd, long, p",
     {"attention_softmax", "attention_softmax_backward"},
     kFloat,
     [](DType dt) {
       return std::vector<Tensor>{random_input({2, 3, 8, 128}, dt), mul(random_input({2, 1, 1, 128}, dt), 4.0),
                                  random_input({3, 5, 37}, dt),     random_input({5, 37}, dt),
                                  random_input({5, 1}, dt),         random_input({2, 20000}, dt)};
     },
     [](const std::vector<Tensor>& in, Device) {
       // The masks are constants (a mask that requires grad takes the composite).
       Tensor bert = in[1].detach().clone();
       fill_(slice(bert, -1, 100, 128), lowest_finite(bert.dtype()));  // padded keys
       Tensor rows = in[3].detach(), column = in[4].detach();
       return std::vector<Tensor>{
           attention_softmax(in[0], bert, 0.125, 0.1, true),                     // vector loads, whole counters
           attention_softmax(in[0], bert, 0.125),                                // evaluation
           attention_softmax(in[2], rows, 0.7, 0.3, true),                       // odd rows: scalar loads
           attention_softmax(in[2], column, 1.5, 0.5, true),                     // a mask of one column
           attention_softmax(in[2], cast(rows, DType::float32), 0.7),            // float32 mask beside half scores
           attention_softmax(transpose(in[2], 1, 2), Tensor(), 2.0, 0.2, true),  // no mask, rows of 5
           attention_softmax(in[5], Tensor(), 3.0, 0.25, true),                  // rows too long for registers
           attention_softmax(in[5], Tensor(), 0.5)};
     }});

}  // namespace
}  // namespace hearth::parity
