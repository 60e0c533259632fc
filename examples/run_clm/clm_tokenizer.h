// The tokenizer run_clm reads: a model folder's tokenizer.json (byte-level
// BPE: GPT-2, Llama 3, Qwen2, ...) with the special tokens its
// tokenizer_config.json names. run_clm uses it through these few functions,
// so the data code sees only a hearth::data::TokenizeFn.
#pragma once

#include <cstdint>
#include <string>

#include "hearth/data/causal_lm_data.h"

namespace run_clm {

struct ClmTokenizer {
  hearth::data::TokenizeFn encode;  // with the tokenizer's special tokens (a Llama's BOS)
  int64_t vocab_size = 0;
  int64_t eos_id = -1;  // -1: none
  int64_t pad_id = -1;  // -1: none (the pad, else the eos, else 0 pads prompt/completion batches)
};

// IoError/ValueError naming the folder when it holds no tokenizer.json, or one
// this cannot read.
ClmTokenizer load_clm_tokenizer(const std::string& dir);

// The tokenizer files of `from` copied into `to` (atomically), so that the
// saved model folder is complete.
void copy_tokenizer_files(const std::string& from, const std::string& to);

}  // namespace run_clm
