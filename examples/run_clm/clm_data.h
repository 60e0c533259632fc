// run_clm's data, prepared as run_clm.py prepares it: the training file
// (split into train and validation by --validation_split_percentage when
// there is no --validation_file), each row tokenized, then packed into
// blocks of block_size tokens by group_texts; or prompt/completion JSON
// lines, one sample each, learning the completion only.
#pragma once

#include <cstdint>
#include <memory>
#include <ostream>
#include <string>

#include "examples/run_clm/clm_arguments.h"
#include "hearth/data/causal_lm_data.h"

namespace run_clm {

struct ClmData {
  std::shared_ptr<const hearth::data::Dataset> train, eval;  // null when not asked for
  bool prompt_completion = false;
  // The collate both loaders use: padding to the longest sample for
  // prompt/completion data, plain stacking for blocks.
  hearth::data::CollateFn collate;
};

// Reads, splits, tokenizes and packs. `eos_id` ends each completion (-1:
// none); `pad_id` pads prompt/completion batches. ValueError/IoError name
// the file and the flag.
ClmData load_clm_data(const ClmArguments& a, const hearth::data::TokenizeFn& tokenize, int64_t eos_id, int64_t pad_id,
                      int64_t block_size, std::ostream* notices);

// The rows datasets' "train[:p%]" selects: round(n * p / 100), half to even.
int64_t percent_split_rows(int64_t rows, int64_t percent);

// Pads every field of a [B, S] batch to [B, width] (input_ids with pad_id,
// attention_mask with 0, labels with -100), so that the evaluation's
// predictions of batches of different lengths stack.
hearth::data::CollateFn fixed_width_collate(int64_t pad_id, int64_t width);

}  // namespace run_clm
