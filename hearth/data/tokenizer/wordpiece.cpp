#include "hearth/data/tokenizer/wordpiece.h"

#include <algorithm>

#include "hearth/data/tokenizer/unicode_text.h"

namespace hearth::data {

void wordpiece_split(const std::string& word, const Vocab& vocab, const WordPieceOptions& options,
                     std::vector<std::string>& out) {
  const std::u32string chars = unicode::decode_utf8(word);
  if (chars.size() > std::min(options.max_input_chars_per_word, kMaxInputCharsPerWord)) {
    out.push_back(options.unk_token);
    return;
  }
  std::vector<std::string> pieces;
  size_t start = 0;
  while (start < chars.size()) {
    // A candidate has at least one byte per code point, so none longer than
    // the longest token (in bytes) can be in the vocabulary.
    size_t end = std::min(chars.size(), start + vocab.longest_token_bytes());
    std::string match;
    for (; end > start; --end) {
      std::string candidate = unicode::encode_utf8(std::u32string_view(chars).substr(start, end - start));
      if (start > 0) candidate = options.continuing_subword_prefix + candidate;
      if (vocab.contains(candidate)) {
        match = std::move(candidate);
        break;
      }
    }
    if (end == start) {  // nothing matched: the whole word is unknown
      out.push_back(options.unk_token);
      return;
    }
    pieces.push_back(std::move(match));
    start = end;
  }
  out.insert(out.end(), pieces.begin(), pieces.end());
}

}  // namespace hearth::data
