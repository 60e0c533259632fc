// Data for causal language modelling, prepared as Hugging Face's run_clm
// prepares it:
//   - texts read from a .txt file (one row per line, empty lines included, as
//     datasets' "text" loader), or the "text" column (else the first) of a
//     .json/.jsonl/.csv file;
//   - each row tokenized on its own, then packed by group_texts: the rows of
//     each map batch (1,000 rows, datasets' default) concatenated and cut into
//     blocks of block_size tokens, the batch's remainder dropped; labels are
//     the inputs (the model shifts them);
//   - or prompt/completion rows (JSON lines with "prompt" and "completion"),
//     one sample each, whose loss covers the completion only: the prompt's
//     labels are -100, as TRL's completion-only training sets them.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "hearth/data/collate.h"
#include "hearth/data/dataset.h"

namespace hearth::data {

using TokenIds = std::vector<int64_t>;
using TokenizeFn = std::function<TokenIds(const std::string&)>;

// The label that no loss is computed for (cross_entropy's ignore_index).
inline constexpr int64_t kIgnoreLabel = -100;
// datasets' Dataset.map batch size, which group_texts' remainders follow.
inline constexpr int64_t kGroupTextsRowsPerBatch = 1000;
// A document longer than this is cut (at a UTF-8 boundary): larger ones are
// corrupt files more often than texts, and tokenizing costs memory per byte.
inline constexpr size_t kMaxDocumentBytes = size_t{64} << 20;

// The rows of a training text file; IoError/ValueError name the file, the
// line and what was expected.
std::vector<std::string> read_lm_texts(const std::string& path);

struct PromptCompletion {
  std::string prompt, completion;
};
// JSON lines (or a JSON array) of objects with string fields "prompt" and
// "completion".
std::vector<PromptCompletion> read_prompt_completions(const std::string& path);

// Whether a JSON-lines file holds prompt/completion rows (its first object
// has both fields) rather than texts.
bool is_prompt_completion_file(const std::string& path);

// run_clm's group_texts applied to map batches of `rows_per_batch` rows.
std::vector<TokenIds> group_texts(const std::vector<TokenIds>& rows, int64_t block_size,
                                  int64_t rows_per_batch = kGroupTextsRowsPerBatch);

// Blocks of equal length: input_ids, attention_mask (ones) and labels (the
// input ids), int64 [block_size].
class PackedBlocksDataset : public Dataset {
 public:
  explicit PackedBlocksDataset(std::vector<TokenIds> blocks);
  int64_t size() const override { return static_cast<int64_t>(blocks_.size()); }
  Example get(int64_t index) const override;
  int64_t block_size() const { return blocks_.empty() ? 0 : static_cast<int64_t>(blocks_.front().size()); }

 private:
  std::vector<TokenIds> blocks_;
};

// One sample per prompt/completion: the prompt's tokens then the
// completion's, then `eos_id` when it is >= 0, cut to `max_length`; labels
// -100 over the prompt. Rows whose completion is cut away entirely keep
// nothing to learn from and are dropped (counted in dropped()).
class PromptCompletionDataset : public Dataset {
 public:
  PromptCompletionDataset(const std::vector<PromptCompletion>& rows, const TokenizeFn& tokenize, int64_t eos_id,
                          int64_t max_length);
  int64_t size() const override { return static_cast<int64_t>(ids_.size()); }
  Example get(int64_t index) const override;
  int64_t dropped() const { return dropped_; }

 private:
  std::vector<TokenIds> ids_, labels_;
  int64_t dropped_ = 0;
};

// Pads each batch to its longest sample at the end: input_ids with
// `pad_token_id`, attention_mask with 0, labels with -100; then stacks.
CollateFn causal_lm_collate(int64_t pad_token_id);

}  // namespace hearth::data
