// Parity cases for norm: p = 2, 1, 3, 0.5, 0 and +-inf over odd, short and long rows.
#include <cmath>
#include <limits>

#include "hearth/ops/elementwise.h"
#include "hearth/ops/factory.h"
#include "hearth/ops/reduction.h"
#include "hearth/ops/view.h"
#include "tests/parity/parity.h"

namespace hearth::parity {
namespace {

const std::vector<DType> kFloat = {DType::float32, DType::float64, DType::bfloat16, DType::float16};
constexpr double kInf = std::numeric_limits<double>::infinity();

std::vector<Tensor> norms(const Tensor& x) {
  std::vector<Tensor> r;
  for (double p : {2.0, 1.0, 3.0, 0.5, kInf, -kInf}) r.push_back(norm(x, p, {-1}));
  r.push_back(norm(transpose(x, 0, 1), 2.0, {1}, true));
  r.push_back(norm(x));
  return r;
}
const ParityRegistrar norm_odd(one_input("norm p=2,1,3,0.5,inf,-inf [37,129]", {"norm"}, kFloat, {37, 129}, norms));
const ParityRegistrar norm_zero(ParityCase{"norm p=0 counts nonzeros [37,129]",
                                           {"norm"},
                                           kFloat,
                                           [](DType dt) {
                                             return std::vector<Tensor>{random_input({37, 129}, dt)};
                                           },
                                           [](const std::vector<Tensor>& in, Device) {
                                             Tensor x = in[0].clone();
                                             fill_(slice(x, 1, 0, 129, 3), 0.0);
                                             return std::vector<Tensor>{norm(x, 0.0, {1}), norm(x, 0.0)};
                                           },
                                           false});
const ParityRegistrar
    norm_long(accelerator_scale(one_input("norm long row [2,500001], short rows [9001,7]", {"norm"}, kFloat,
                                          {2, 500001}, [](const Tensor& x) {
                                            Tensor short_rows = slice(x.reshape({-1}), 0, 0, 63007).reshape({9001, 7});
                                            return std::vector<Tensor>{norm(x, 2.0, {1}), norm(x, kInf, {1}),
                                                                       norm(x, 1.0), norm(short_rows, 2.0, {1}),
                                                                       norm(short_rows, 3.0, {1})};
                                          })));

}  // namespace
}  // namespace hearth::parity
