// Texts (or pairs of texts) with labels, tokenised once up front, as
// run_glue's dataset.map does: sample i is
//   {"input_ids", "token_type_ids", "attention_mask"}: int64 [length]
//   "labels": int64 [] (a class id) or float32 [] (a regression target), when labelled
// With Padding::max_length every sample has the same length and the default
// collation stacks them; otherwise batch them with padding_collate, which pads
// each batch to its longest sample (Hugging Face's DataCollatorWithPadding).
#pragma once

#include <cstdint>
#include <vector>

#include "hearth/data/collate.h"
#include "hearth/data/dataset.h"
#include "hearth/data/glue.h"
#include "hearth/data/tokenizer/bert_tokenizer.h"

namespace hearth::data {

class TokenizedTextDataset : public Dataset {
 public:
  // `labels` from encode_labels(texts, ...), one per row; empty for data to
  // predict on, whose samples then have no "labels" field.
  TokenizedTextDataset(const LabeledTexts& texts, const std::vector<double>& labels, bool regression,
                       const BertTokenizer& tokenizer, const EncodeOptions& options);

  int64_t size() const override { return static_cast<int64_t>(encodings_.size()); }
  Example get(int64_t index) const override;
  const Encoding& encoding(int64_t index) const;
  bool is_regression() const { return regression_; }

 private:
  std::vector<Encoding> encodings_;
  std::vector<double> labels_;
  bool regression_ = false;
};

// Pads "input_ids" with `pad_token_id` and "token_type_ids" and
// "attention_mask" with 0 at the end, to the batch's longest sample, then
// stacks every field (default_collate).
CollateFn padding_collate(int64_t pad_token_id);

}  // namespace hearth::data
