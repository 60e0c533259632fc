// libFuzzer target: hearth::fuzz::fuzz_store_request (fuzz/store_harness.h).
#include "fuzz/fuzz_support.h"
#include "fuzz/store_harness.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  return hearth::fuzz::abort_on_problem(hearth::fuzz::fuzz_store_request(data, size));
}
