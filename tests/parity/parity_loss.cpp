// Parity cases for cross_entropy and nll_loss, forward and backward
// (reduction "none": the per-row kernels alone, then the reductions).
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

// Class targets in [0, C) with every fifth one `ignore` (the ignore_index the case passes).
Tensor targets(const Shape& shape, int64_t C, int64_t ignore = -100) {
  Tensor t = randint(0, C, shape, DType::int64);
  int64_t* p = t.data<int64_t>();
  for (int64_t i = 0; i < t.numel(); i += 5) p[i] = ignore;
  return t;
}
const ParityRegistrar cross_entropy_case({"cross_entropy: ignore, weight, smoothing, [N,C,d], wide",
                                          {"cross_entropy", "cross_entropy_backward"},
                                          kFloat,
                                          [](DType dt) {
                                            return std::vector<Tensor>{
                                                random_input({37, 11}, dt), targets({37}, 11),
                                                positive({11}, dt),         random_input({4, 7, 3}, dt),
                                                targets({4, 3}, 7),         random_input({5, 20000}, dt),
                                                targets({5}, 20000),        random_input({64, 1000}, dt),
                                                targets({64}, 1000, 3),     positive({1000}, dt)};
                                          },
                                          [](const std::vector<Tensor>& in, Device) {
                                            return std::vector<Tensor>{
                                                cross_entropy(in[0], in[1], Tensor(), -100, "none"),
                                                cross_entropy(in[0], in[1], in[2], -100, "none", 0.1),
                                                cross_entropy(mul(in[0], 8.0), in[1], Tensor(), -100, "none", 0.3),
                                                cross_entropy(in[3], in[4], Tensor(), -100, "none"),
                                                cross_entropy(in[5], in[6], Tensor(), -100, "none", 0.05),
                                                // ignore_index 3: the -100 targets become 3 so they are ignored too
                                                cross_entropy(in[7], where(ge(in[8], 0), in[8], 3), in[9], 3, "none")};
                                          }});
const ParityRegistrar nll_loss_case({"nll_loss: ignore, weight, [N,C,d]",
                                     {"nll_loss", "nll_loss_backward"},
                                     kFloat,
                                     [](DType dt) {
                                       return std::vector<Tensor>{random_input({37, 11}, dt), targets({37}, 11),
                                                                  positive({11}, dt), random_input({3, 5, 4}, dt),
                                                                  targets({3, 4}, 5, 2)};
                                     },
                                     [](const std::vector<Tensor>& in, Device) {
                                       return std::vector<Tensor>{
                                           nll_loss(in[0], in[1], Tensor(), -100, "none"),
                                           nll_loss(in[0], in[1], in[2], -100, "none"),
                                           nll_loss(in[3], where(ge(in[4], 0), in[4], 2), Tensor(), 2, "none")};
                                     }});
const ParityRegistrar loss_mixed(
    {"losses: half logits, float32 class weights",
     {"cross_entropy", "cross_entropy_backward", "nll_loss", "nll_loss_backward"},
     kHalf,
     [](DType dt) {
       return std::vector<Tensor>{random_input({29, 13}, dt), targets({29}, 13), positive({13}, DType::float32)};
     },
     [](const std::vector<Tensor>& in, Device) {
       return std::vector<Tensor>{cross_entropy(in[0], in[1], in[2], -100, "none", 0.2),
                                  nll_loss(in[0], in[1], in[2], -100, "none")};
     }});
const ParityRegistrar loss_reductions(
    {"losses reduced: mean (weighted), sum",
     {"cross_entropy", "cross_entropy_backward", "nll_loss", "nll_loss_backward"},
     kFloat,
     [](DType dt) {
       return std::vector<Tensor>{random_input({45, 17}, dt), targets({45}, 17), positive({17}, dt)};
     },
     [](const std::vector<Tensor>& in, Device) {
       return std::vector<Tensor>{cross_entropy(in[0], in[1]), cross_entropy(in[0], in[1], in[2], -100, "mean", 0.1),
                                  cross_entropy(in[0], in[1], Tensor(), -100, "sum"), nll_loss(in[0], in[1], in[2]),
                                  nll_loss(in[0], in[1], Tensor(), -100, "sum")};
     }});

}  // namespace
}  // namespace hearth::parity
