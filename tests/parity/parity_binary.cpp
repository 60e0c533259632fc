// Parity cases for add, sub, mul and div: a broadcast operand and a transposed
// one, every dtype each op takes.
#include "hearth/ops/elementwise.h"
#include "hearth/ops/factory.h"
#include "hearth/ops/view.h"
#include "tests/parity/parity.h"

namespace hearth::parity {
namespace {

const std::vector<DType> kFloat = {DType::float32, DType::float64, DType::bfloat16, DType::float16};
const std::vector<DType> kAll = {DType::float32, DType::float64, DType::bfloat16, DType::float16,
                                 DType::int64,   DType::int32,   DType::uint8};

ParityCase binary_case(const char* name, const char* op, std::function<Tensor(const Tensor&, const Tensor&)> f,
                       std::vector<DType> dtypes) {
  return ParityCase{std::string(name) + " broadcast+transposed",
                    {op, "sum"},
                    std::move(dtypes),
                    [](DType dt) {
                      Tensor b = random_input({1, 17}, dt);
                      if (is_floating(dt)) b = add(b, 3.0).to(dt);  // keep divisors away from zero
                      return std::vector<Tensor>{random_input({17, 65}, dt), b, random_input({65}, dt)};
                    },
                    [f](const std::vector<Tensor>& in, Device) {
                      Tensor a_t = transpose(in[0], 0, 1);  // [65, 17] non-contiguous, broadcast with [1, 17]
                      return std::vector<Tensor>{f(a_t, in[1]), f(in[0], in[2])};
                    }};
}
const ParityRegistrar add_case(binary_case(
    "add", "add", [](const Tensor& a, const Tensor& b) { return add(a, b, 2); }, kAll));
// add_ of a bfloat16 or float16 tensor into a float32 one (schemas/binary.h:
// widened as it is read), contiguous, broadcast and transposed.
const ParityRegistrar add_widening_case(
    {"add_ float32 += half, broadcast+transposed",
     {"add"},
     {DType::bfloat16, DType::float16},
     [](DType dt) {
       return std::vector<Tensor>{random_input({17, 65}, DType::float32), random_input({17, 65}, dt),
                                  random_input({65}, dt), random_input({65, 17}, dt)};
     },
     [](const std::vector<Tensor>& in, Device) {
       Tensor a0 = in[0].detach().clone(), a1 = in[0].detach().clone(), a2 = in[0].detach().clone();
       add_(a0, in[1].detach());
       add_(a1, in[2].detach(), -2);
       add_(a2, transpose(in[3].detach(), 0, 1));
       return std::vector<Tensor>{a0, a1, a2};
     }});
const ParityRegistrar sub_case(binary_case(
    "sub", "sub", [](const Tensor& a, const Tensor& b) { return sub(a, b); }, kAll));
const ParityRegistrar mul_case(binary_case(
    "mul", "mul", [](const Tensor& a, const Tensor& b) { return mul(a, b); }, kAll));
const ParityRegistrar div_case(binary_case(
    "div", "div", [](const Tensor& a, const Tensor& b) { return div(a, b); }, kFloat));

}  // namespace
}  // namespace hearth::parity
