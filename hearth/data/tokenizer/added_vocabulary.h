// The added tokens of a Hugging Face tokenizer.json ("<|endoftext|>",
// "<|begin_of_text|>", ...): found in the text before anything else and kept
// whole, so the text between them is what gets normalized, pre-tokenized and
// split by the model. Matching is leftmost-longest over all tokens at once;
// a token marked
//   single_word  counts only where no word character touches it,
//   lstrip       takes the whitespace before it along,
//   rstrip       takes the whitespace after it along,
//   normalized   is matched in the normalized text (and its own content
//                normalized), else in the text as given.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace hearth::data {

struct AddedToken {
  std::string content;
  int64_t id = 0;
  bool single_word = false;
  bool lstrip = false;
  bool rstrip = false;
  bool normalized = true;
  bool special = false;
};

// A stretch of the text: plain text, or an added token (its id).
struct AddedTokenSpan {
  size_t begin = 0, end = 0;
  std::optional<int64_t> id;
};

// Finds one set of added tokens in text (one of the two passes).
class AddedTokenMatcher {
 public:
  AddedTokenMatcher() = default;
  // `patterns[i]` is what to look for (the content, or its normalized form)
  // and `tokens[i]` the token it stands for.
  AddedTokenMatcher(const std::vector<std::string>& patterns, const std::vector<AddedToken>& tokens);

  bool empty() const { return tokens_.empty(); }
  // `text` cut into plain stretches and added tokens, covering all of it;
  // empty stretches are left out.
  std::vector<AddedTokenSpan> split(std::string_view text) const;

 private:
  struct Node {
    std::vector<std::pair<unsigned char, int32_t>> children;  // sorted by byte
    int32_t token = -1;                                       // index in tokens_
  };
  // The longest pattern starting at text[at]: (index in tokens_, length), or index -1.
  std::pair<int32_t, size_t> longest_at(std::string_view text, size_t at) const;

  std::vector<Node> trie_;
  std::vector<AddedToken> tokens_;
  bool first_bytes_[256] = {};
};

// Unicode White_Space (Rust's \s), which lstrip and rstrip take.
bool is_unicode_white_space(char32_t c);
// A word character (Rust's \w: letters, marks, decimal digits, connector
// punctuation, join controls), which single_word tokens must not touch.
bool is_word_char(char32_t c);

}  // namespace hearth::data
