// Parity cases for the index-computed fills arange_ and linspace_.
#include "hearth/ops/elementwise.h"
#include "hearth/ops/factory.h"
#include "hearth/ops/view.h"
#include "tests/parity/parity.h"

namespace hearth::parity {
namespace {

const ParityRegistrar c_range(ParityCase{"arange/linspace",
                                         {"arange_", "linspace_"},
                                         {DType::float32, DType::float64, DType::int64, DType::int32},
                                         [](DType) { return std::vector<Tensor>{}; },
                                         [](const std::vector<Tensor>&, Device d) {
                                           return std::vector<Tensor>{arange(-3, 1000, 7, DType::float32, d),
                                                                      arange(-3, 1000, 7, DType::int64, d),
                                                                      arange(0.5, 9.0, 0.25, DType::float64, d),
                                                                      linspace(-1.0, 2.0, 1001, DType::float32, d)};
                                         },
                                         false});

}  // namespace
}  // namespace hearth::parity
