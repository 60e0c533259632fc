// libFuzzer target: hearth::fuzz::fuzz_optimizer_state (fuzz/harnesses.h).
#include "fuzz/harnesses.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  return hearth::fuzz::abort_on_problem(hearth::fuzz::fuzz_optimizer_state(data, size));
}
