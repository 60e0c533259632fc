#include "hearth/data/tokenized_text_dataset.h"

#include <algorithm>
#include <string_view>

#include "hearth/core/errors.h"
#include "hearth/ops/factory.h"

namespace hearth::data {

TokenizedTextDataset::TokenizedTextDataset(const LabeledTexts& texts, const std::vector<double>& labels,
                                           bool regression, const BertTokenizer& tokenizer,
                                           const EncodeOptions& options)
    : labels_(labels), regression_(regression) {
  HEARTH_CHECK(labels.empty() || labels.size() == texts.rows.size(), ValueError, "[data] ", texts.source, ": ",
               texts.rows.size(), " rows but ", labels.size(), " labels");
  encodings_.reserve(texts.rows.size());
  for (const LabeledText& row : texts.rows) encodings_.push_back(tokenizer.encode(row.text_a, row.text_b, options));
}

const Encoding& TokenizedTextDataset::encoding(int64_t index) const {
  check_index("TokenizedTextDataset", index, size());
  return encodings_[static_cast<size_t>(index)];
}

Example TokenizedTextDataset::get(int64_t index) const {
  const Encoding& e = encoding(index);
  Example out;
  out[field::kInputIds] = int64_row(e.input_ids);
  out[field::kTokenTypeIds] = int64_row(e.token_type_ids);
  out[field::kAttentionMask] = int64_row(e.attention_mask);
  if (labels_.empty()) return out;
  const double label = labels_[static_cast<size_t>(index)];
  out[field::kLabels] = regression_ ? tensor(std::vector<float>{static_cast<float>(label)}, Shape{})
                                    : tensor(std::vector<int64_t>{static_cast<int64_t>(label)}, Shape{});
  return out;
}

CollateFn padding_collate(int64_t pad_token_id) {
  return [pad_token_id](std::vector<Example> samples) {
    int64_t longest = 0;
    for (const Example& s : samples)
      if (s.contains(field::kInputIds)) longest = std::max(longest, s.at(field::kInputIds).size(0));
    for (Example& s : samples) {
      for (const char* name : {field::kInputIds, field::kTokenTypeIds, field::kAttentionMask}) {
        if (!s.contains(name)) continue;
        s[name] = pad_int64_row(s.at(name), longest, std::string_view(name) == field::kInputIds ? pad_token_id : 0);
      }
    }
    return default_collate(std::move(samples));
  };
}

}  // namespace hearth::data
