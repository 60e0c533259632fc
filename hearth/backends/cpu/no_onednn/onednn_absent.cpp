// Built where CMake found no oneDNN: every call goes to the reference kernels,
// and `hearth env` says how to get the faster convolutions.
#include <string>

#include "hearth/backends/cpu/onednn/onednn.h"
#include "hearth/dispatch/backend_libraries.h"

namespace hearth::cpu::onednn {
namespace {

[[maybe_unused]] const bool kRegistered = [] {
  register_backend_library(kCpu, {"oneDNN", [] {
                                    return std::string(
                                        "not built (install libdnnl-dev and reconfigure): convolutions "
                                        "through im2col and OpenBLAS, float32 GEMMs through OpenBLAS");
                                  }});
  return true;
}();

}  // namespace

bool conv2d_forward(OpCall&) { return false; }
bool conv2d_backward_input(OpCall&) { return false; }
bool conv2d_backward_weight(OpCall&) { return false; }
bool sgemm(bool, bool, int64_t, int64_t, int64_t, float, const float*, int64_t, const float*, int64_t, float, float*,
           int64_t, bool) {
  return false;
}
uint64_t sgemm_calls() { return 0; }
uint64_t calls_taken() { return 0; }
uint64_t weight_reorders() { return 0; }
uint64_t weight_reorders_saved() { return 0; }

}  // namespace hearth::cpu::onednn
