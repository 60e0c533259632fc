#include "hearth/data/tokenizer/added_vocabulary.h"

#include <algorithm>

#include <utf8proc.h>

#include "hearth/data/tokenizer/utf8_lossy.h"

namespace hearth::data {

bool is_unicode_white_space(char32_t c) {
  return (c >= 0x09 && c <= 0x0D) || c == 0x20 || c == 0x85 || c == 0xA0 || c == 0x1680 ||
         (c >= 0x2000 && c <= 0x200A) || c == 0x2028 || c == 0x2029 || c == 0x202F || c == 0x205F || c == 0x3000;
}

bool is_word_char(char32_t c) {
  if (c == 0x200C || c == 0x200D) return true;
  // Letters in category So that Unicode counts as alphabetic (circled and squared Latin letters).
  if ((c >= 0x24B6 && c <= 0x24E9) || (c >= 0x1F130 && c <= 0x1F149) || (c >= 0x1F150 && c <= 0x1F169) ||
      (c >= 0x1F170 && c <= 0x1F189))
    return true;
  switch (utf8proc_category(static_cast<utf8proc_int32_t>(c))) {
    case UTF8PROC_CATEGORY_LU:
    case UTF8PROC_CATEGORY_LL:
    case UTF8PROC_CATEGORY_LT:
    case UTF8PROC_CATEGORY_LM:
    case UTF8PROC_CATEGORY_LO:
    case UTF8PROC_CATEGORY_MN:
    case UTF8PROC_CATEGORY_MC:
    case UTF8PROC_CATEGORY_ME:
    case UTF8PROC_CATEGORY_ND:
    case UTF8PROC_CATEGORY_NL:
    case UTF8PROC_CATEGORY_PC:
      return true;
    default:
      return false;
  }
}

namespace {

// The last character of text[0, end) and the first of text[begin, ...), as
// code points (U+FFFD for a byte that does not start valid UTF-8).
char32_t char_before(std::string_view text, size_t end) {
  size_t start = end - 1;
  while (start > 0 && end - start < 4 && (static_cast<unsigned char>(text[start]) & 0xC0) == 0x80) --start;
  const size_t n = utf8::valid_sequence_length(text, start);
  return n == end - start ? utf8::code_point_at(text, start, n) : U'\uFFFD';
}

char32_t char_at(std::string_view text, size_t begin) {
  const size_t n = utf8::valid_sequence_length(text, begin);
  return n == 0 ? U'\uFFFD' : utf8::code_point_at(text, begin, n);
}

// Where the whitespace that ends text[0, end) begins.
size_t white_space_run_start(std::string_view text, size_t end) {
  while (end > 0) {
    size_t start = end - 1;
    while (start > 0 && end - start < 4 && (static_cast<unsigned char>(text[start]) & 0xC0) == 0x80) --start;
    const size_t n = utf8::valid_sequence_length(text, start);
    if (n != end - start || !is_unicode_white_space(utf8::code_point_at(text, start, n))) break;
    end = start;
  }
  return end;
}

// Where the whitespace that starts text[begin, ...) ends.
size_t white_space_run_end(std::string_view text, size_t begin) {
  while (begin < text.size()) {
    const size_t n = utf8::valid_sequence_length(text, begin);
    if (n == 0 || !is_unicode_white_space(utf8::code_point_at(text, begin, n))) break;
    begin += n;
  }
  return begin;
}

}  // namespace

AddedTokenMatcher::AddedTokenMatcher(const std::vector<std::string>& patterns, const std::vector<AddedToken>& tokens)
    : tokens_(tokens) {
  trie_.emplace_back();
  for (size_t t = 0; t < patterns.size(); ++t) {
    const std::string& p = patterns[t];
    if (p.empty()) continue;
    first_bytes_[static_cast<unsigned char>(p[0])] = true;
    int32_t node = 0;
    for (char ch : p) {
      const auto b = static_cast<unsigned char>(ch);
      auto& children = trie_[static_cast<size_t>(node)].children;
      auto it = std::lower_bound(children.begin(), children.end(), std::make_pair(b, int32_t{-1}));
      if (it != children.end() && it->first == b) {
        node = it->second;
        continue;
      }
      const auto next = static_cast<int32_t>(trie_.size());
      children.insert(it, {b, next});
      trie_.emplace_back();
      node = next;
    }
    // A repeated pattern keeps the last token, as a map insert would.
    trie_[static_cast<size_t>(node)].token = static_cast<int32_t>(t);
  }
}

std::pair<int32_t, size_t> AddedTokenMatcher::longest_at(std::string_view text, size_t at) const {
  std::pair<int32_t, size_t> best{-1, 0};
  int32_t node = 0;
  for (size_t i = at; i < text.size(); ++i) {
    const auto b = static_cast<unsigned char>(text[i]);
    const auto& children = trie_[static_cast<size_t>(node)].children;
    auto it = std::lower_bound(children.begin(), children.end(), std::make_pair(b, int32_t{-1}));
    if (it == children.end() || it->first != b) break;
    node = it->second;
    if (trie_[static_cast<size_t>(node)].token >= 0) best = {trie_[static_cast<size_t>(node)].token, i + 1 - at};
  }
  return best;
}

std::vector<AddedTokenSpan> AddedTokenMatcher::split(std::string_view text) const {
  std::vector<AddedTokenSpan> spans;
  size_t covered = 0;  // text before this is in spans already
  size_t at = 0;
  while (at < text.size()) {
    if (!first_bytes_[static_cast<unsigned char>(text[at])]) {
      ++at;
      continue;
    }
    const auto [index, length] = longest_at(text, at);
    if (index < 0) {
      ++at;
      continue;
    }
    const AddedToken& token = tokens_[static_cast<size_t>(index)];
    size_t begin = at, end = at + length;
    at = end;  // a match set aside below still consumes its text
    if (token.single_word) {
      const bool word_before = begin > 0 && is_word_char(char_before(text, begin));
      const bool word_after = end < text.size() && is_word_char(char_at(text, end));
      if (word_before || word_after) continue;
    }
    if (token.lstrip) begin = std::max(white_space_run_start(text, begin), covered);
    if (token.rstrip) end = white_space_run_end(text, end);
    if (begin > covered) spans.push_back({covered, begin, std::nullopt});
    spans.push_back({begin, end, token.id});
    covered = end;
    at = std::max(at, end);
  }
  if (covered < text.size()) spans.push_back({covered, text.size(), std::nullopt});
  return spans;
}

}  // namespace hearth::data
