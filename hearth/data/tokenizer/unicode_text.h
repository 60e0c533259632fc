// The Unicode facts BERT's tokenizer needs, over UTF-32 text: decoding and
// encoding UTF-8, the character classes Python's `unicodedata` gives Hugging
// Face's BertTokenizer (whitespace, control, punctuation, CJK ideographs),
// lower-casing and accent stripping. Backed by utf8proc, so the answers follow
// the Unicode Character Database rather than hand-made tables.
#pragma once

#include <string>
#include <string_view>

namespace hearth::data::unicode {

// Invalid UTF-8 sequences decode to U+FFFD (which BERT's text cleaning drops),
// one per bad byte, as Python's errors="replace" does.
std::u32string decode_utf8(std::string_view text);
std::string encode_utf8(std::u32string_view text);
std::string encode_utf8(char32_t c);

// BERT's whitespace: space, tab, newline, carriage return and category Zs.
bool is_bert_whitespace(char32_t c);
// BERT's control characters: categories C* (Cc, Cf, Cn, Co, Cs) except tab,
// newline and carriage return, which count as whitespace.
bool is_bert_control(char32_t c);
// BERT's punctuation: the ASCII non-alphanumeric printable ranges (which
// include symbols such as '$' and '+') and every Unicode category P*.
bool is_bert_punctuation(char32_t c);
// The CJK Unified Ideographs blocks (and their extensions and compatibility
// blocks) that BERT splits into one token per character. Hangul, kana and
// other scripts are written with spaces and are not in these blocks.
bool is_cjk_ideograph(char32_t c);
// What Python's str.split() splits on (str.isspace()).
bool is_python_whitespace(char32_t c);

// Python's str.lower() of one character: the simple lower-case mapping, plus
// the one unconditional multi-character mapping (U+0130 -> "i\u0307").
std::u32string lower(std::u32string_view text);
// NFD, then every nonspacing mark (category Mn) removed: "café" -> "cafe".
std::u32string strip_accents(std::u32string_view text);

}  // namespace hearth::data::unicode
