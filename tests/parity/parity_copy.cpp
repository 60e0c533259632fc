// Parity cases for copy_ (a transposed source cast to every dtype) and fill_
// (a strided slice). The engine's copy paths have their own cases in
// parity_engine_paths.cpp.
#include "hearth/ops/elementwise.h"
#include "hearth/ops/factory.h"
#include "hearth/ops/view.h"
#include "tests/parity/parity.h"

namespace hearth::parity {
namespace {

const std::vector<DType> kAll = {DType::float32, DType::float64, DType::bfloat16, DType::float16,
                                 DType::int64,   DType::int32,   DType::uint8};

const ParityRegistrar copy_cast({"copy_ transposed + cast to every dtype",
                                 {"copy_"},
                                 kAll,
                                 [](DType dt) {
                                   return std::vector<Tensor>{random_input({37, 19}, dt)};
                                 },
                                 [](const std::vector<Tensor>& in, Device) {
                                   std::vector<Tensor> outs;
                                   for (DType to : {DType::float32, DType::int64, DType::bfloat16, DType::bool_})
                                     outs.push_back(cast(transpose(in[0], 0, 1).contiguous(), to));
                                   return outs;
                                 },
                                 false});
const ParityRegistrar fill({"fill_ strided slice",
                            {"fill_"},
                            kAll,
                            [](DType dt) {
                              return std::vector<Tensor>{random_input({9, 33}, dt)};
                            },
                            [](const std::vector<Tensor>& in, Device) {
                              Tensor t = in[0].clone();
                              fill_(slice(t, 1, 1, 30, 3), 7);
                              return std::vector<Tensor>{t};
                            },
                            false});

}  // namespace
}  // namespace hearth::parity
