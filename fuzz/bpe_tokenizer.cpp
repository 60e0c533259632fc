// libFuzzer target: hearth::fuzz::fuzz_bpe_tokenizer (fuzz/bpe_harness.h).
#include "fuzz/bpe_harness.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  return hearth::fuzz::abort_on_problem(hearth::fuzz::fuzz_bpe_tokenizer(data, size));
}
