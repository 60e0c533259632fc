#include "hearth/data/tokenizer/post_processor.h"

namespace hearth::data {

void TemplatePostProcessor::process(std::vector<int64_t>& ids, bool add_special_tokens) const {
  std::vector<int64_t> out;
  out.reserve(ids.size() + single_.size());
  for (const Item& item : single_) {
    if (item.is_sequence) {
      out.insert(out.end(), ids.begin(), ids.end());
    } else if (add_special_tokens) {
      out.insert(out.end(), item.special_ids.begin(), item.special_ids.end());
    }
  }
  ids = std::move(out);
}

}  // namespace hearth::data
