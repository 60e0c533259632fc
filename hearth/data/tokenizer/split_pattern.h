// The patterns of a tokenizer.json (a Split pre-tokenizer's, a Replace's),
// compiled with PCRE2 in UTF and Unicode-property mode: the pre-tokenizer
// patterns of GPT-2 and Llama 3 use Unicode classes (\p{L}, \p{N}),
// case-insensitive groups and lookahead (\s+(?!\S)). Hugging Face compiles
// them with Oniguruma; the Perl-style syntax they use means the same in both
// (with Oniguruma's Ruby defaults: ^ and $ match at line ends, so the pattern
// is compiled multi-line). \s is rewritten to Oniguruma's set, which unlike
// PCRE2's leaves out U+180E (split_pattern.cpp).
#pragma once

#include <cstddef>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

namespace hearth::data {

// A stretch of text: a match of the pattern, or a gap between matches.
struct PatternSpan {
  size_t begin = 0, end = 0;
  bool is_match = false;
};

class SplitPattern {
 public:
  // `where` prefixes every message, e.g. "[tokenizer] t.json: field 'pre_tokenizer.pattern'".
  // A pattern that does not compile is a ValueError naming where, the pattern and the reason.
  static SplitPattern regex(const std::string& pattern, const std::string& where);
  // `text` matched literally (a tokenizer.json's {"String": ...} pattern).
  static SplitPattern literal(const std::string& text, const std::string& where);

  // `text` (valid UTF-8) cut into matches and the gaps between them, in
  // order and covering all of it; an empty text is one empty gap. Matches are
  // found left to right, each search starting where the last match ended; an
  // empty match right where the previous match ended is skipped (Rust's and
  // Oniguruma's find_iter). A match that exceeds PCRE2's backtracking limits
  // is a ValueError naming `where`.
  std::vector<PatternSpan> find_matches(std::string_view text) const;

  const std::string& source() const;

  struct Compiled;  // the PCRE2 code, defined where PCRE2 is included

 private:
  explicit SplitPattern(std::shared_ptr<const Compiled> c) : compiled_(std::move(c)) {}
  std::shared_ptr<const Compiled> compiled_;
};

}  // namespace hearth::data
