// Parity cases for embedding, forward and backward.
#include <cmath>

#include "hearth/ops/elementwise.h"
#include "hearth/ops/factory.h"
#include "hearth/ops/nn_functional.h"
#include "hearth/ops/view.h"
#include "tests/parity/parity.h"

namespace hearth::parity {
namespace {

const std::vector<DType> kFloat = {DType::float32, DType::float64, DType::bfloat16, DType::float16};
const std::vector<DType> kEvery = {DType::float32, DType::float64, DType::bfloat16, DType::float16,
                                   DType::int64,   DType::int32,   DType::uint8,    DType::bool_};

const ParityRegistrar embedding_case({"embedding: repeats, padding_idx, int32 indices, aligned rows",
                                      {"embedding", "embedding_backward"},
                                      kFloat,
                                      [](DType dt) {
                                        Tensor idx = randint(0, 50, {7, 9}, DType::int64);
                                        for (int64_t i = 0; i < idx.numel(); i += 4)
                                          idx.data<int64_t>()[i] = 3;  // many repeats of the padding row
                                        return std::vector<Tensor>{random_input({50, 33}, dt), idx,
                                                                   random_input({20, 64}, dt),
                                                                   randint(0, 20, {40}, DType::int32)};
                                      },
                                      [](const std::vector<Tensor>& in, Device) {
                                        return std::vector<Tensor>{embedding(in[1], in[0], 3), embedding(in[1], in[0]),
                                                                   embedding(in[3], in[2]), embedding(in[3], in[2], 0)};
                                      }});
const ParityRegistrar embedding_every_dtype(
    {"embedding lookup, every dtype",
     {"embedding"},
     kEvery,
     [](DType dt) {
       return std::vector<Tensor>{random_input({30, 7}, dt), randint(0, 30, {12}, DType::int64),
                                  random_input({9, 16}, dt), randint(0, 9, {5, 2}, DType::int32)};
     },
     [](const std::vector<Tensor>& in, Device) {
       return std::vector<Tensor>{embedding(in[1], in[0]), embedding(in[3], in[2])};
     },
     false});

}  // namespace
}  // namespace hearth::parity
