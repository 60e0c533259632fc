// Parity cases for the index-computed fills arange_ and linspace_, one case
// each, so that a backend with one of them has it checked.
#include "hearth/ops/elementwise.h"
#include "hearth/ops/factory.h"
#include "hearth/ops/view.h"
#include "tests/parity/parity.h"

namespace hearth::parity {
namespace {

// The case's dtype travels as the dtype of a one-element input (the fills
// themselves take none).
std::vector<Tensor> dtype_marker(DType dt) { return {Tensor::empty({1}, dt, Device())}; }

const ParityRegistrar c_arange(ParityCase{"arange",
                                          {"arange_"},
                                          {DType::float32, DType::float64, DType::int64, DType::int32},
                                          dtype_marker,
                                          [](const std::vector<Tensor>& in, Device d) {
                                            const DType dt = in[0].dtype();
                                            std::vector<Tensor> out{arange(-3, 1000, 7, dt, d)};
                                            if (is_floating(dt)) out.push_back(arange(0.5, 9.0, 0.25, dt, d));
                                            return out;
                                          },
                                          false});

const ParityRegistrar c_linspace(ParityCase{"linspace",
                                            {"linspace_"},
                                            {DType::float32, DType::float64},
                                            dtype_marker,
                                            [](const std::vector<Tensor>& in, Device d) {
                                              return std::vector<Tensor>{
                                                  linspace(-1.0, 2.0, 1001, in[0].dtype(), d)};
                                            },
                                            false});

}  // namespace
}  // namespace hearth::parity
