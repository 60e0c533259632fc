// The first stage of BERT's tokenizer, as Hugging Face's BasicTokenizer does it:
//
//   1. clean: drop NUL, U+FFFD and control characters; every whitespace
//      character becomes a space;
//   2. put spaces around each CJK ideograph, so each is a word of its own;
//   3. split on whitespace (no Unicode normalisation: a decomposed "e\u0301"
//      stays two code points, as in Hugging Face's tokenizers library);
//   4. per word (unless it is a never-split token): lower-case and strip
//      accents when do_lower_case (strip_accents decides separately when set),
//      then split every punctuation character off as a word of its own.
//
// The result is a list of words for WordPiece.
#pragma once

#include <optional>
#include <string>
#include <unordered_set>
#include <vector>

namespace hearth::data {

struct BasicTokenizerOptions {
  bool do_lower_case = true;
  // Unset: follows do_lower_case (Hugging Face's strip_accents=None).
  std::optional<bool> strip_accents;
  bool tokenize_chinese_chars = true;
  bool clean_text = true;
  // Words left whole: neither lower-cased nor split on punctuation.
  std::unordered_set<std::string> never_split;
};

class BasicTokenizer {
 public:
  explicit BasicTokenizer(BasicTokenizerOptions options = {}) : options_(std::move(options)) {}
  // UTF-8 in, UTF-8 words out.
  std::vector<std::string> tokenize(const std::string& text) const;
  const BasicTokenizerOptions& options() const { return options_; }

 private:
  BasicTokenizerOptions options_;
};

}  // namespace hearth::data
