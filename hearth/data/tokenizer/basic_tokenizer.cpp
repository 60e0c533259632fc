#include "hearth/data/tokenizer/basic_tokenizer.h"

#include "hearth/data/tokenizer/unicode_text.h"

namespace hearth::data {
namespace {

namespace u = unicode;

std::u32string clean(std::u32string_view text) {
  std::u32string out;
  out.reserve(text.size());
  for (char32_t c : text) {
    if (c == 0 || c == 0xFFFD || u::is_bert_control(c)) continue;
    out.push_back(u::is_bert_whitespace(c) ? U' ' : c);
  }
  return out;
}

std::u32string space_cjk(std::u32string_view text) {
  std::u32string out;
  out.reserve(text.size());
  for (char32_t c : text) {
    if (u::is_cjk_ideograph(c)) {
      out.push_back(U' ');
      out.push_back(c);
      out.push_back(U' ');
    } else {
      out.push_back(c);
    }
  }
  return out;
}

std::vector<std::u32string> split_whitespace(std::u32string_view text) {
  std::vector<std::u32string> words;
  std::u32string word;
  for (char32_t c : text) {
    if (u::is_python_whitespace(c)) {
      if (!word.empty()) words.push_back(std::move(word));
      word.clear();
    } else {
      word.push_back(c);
    }
  }
  if (!word.empty()) words.push_back(std::move(word));
  return words;
}

void split_punctuation(const std::u32string& word, std::vector<std::string>& out) {
  std::u32string piece;
  for (char32_t c : word) {
    if (u::is_bert_punctuation(c)) {
      if (!piece.empty()) out.push_back(u::encode_utf8(piece));
      piece.clear();
      out.push_back(u::encode_utf8(c));
    } else {
      piece.push_back(c);
    }
  }
  if (!piece.empty()) out.push_back(u::encode_utf8(piece));
}

}  // namespace

std::vector<std::string> BasicTokenizer::tokenize(const std::string& text) const {
  std::u32string t = u::decode_utf8(text);
  if (options_.clean_text) t = clean(t);
  if (options_.tokenize_chinese_chars) t = space_cjk(t);
  const bool strip = options_.strip_accents.value_or(options_.do_lower_case);
  std::vector<std::string> out;
  for (std::u32string& word : split_whitespace(t)) {
    if (options_.never_split.count(u::encode_utf8(word)) != 0) {
      out.push_back(u::encode_utf8(word));
      continue;
    }
    if (options_.do_lower_case) word = u::lower(word);
    if (strip) word = u::strip_accents(word);
    // Stripping can leave nothing (a word of lone combining marks), and a
    // split piece is never whitespace, so the pieces are the final words.
    split_punctuation(word, out);
  }
  return out;
}

}  // namespace hearth::data
