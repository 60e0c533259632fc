// The character classes and normalisations BERT's tokenizer is built on.
#include <gtest/gtest.h>

#include "hearth/data/tokenizer/unicode_text.h"

namespace hearth::data::unicode {
namespace {

TEST(UnicodeText, Utf8RoundTripAndInvalidBytes) {
  const std::string text = "a\xC3\xA9\xE4\xB8\xAD\xF0\x9F\x98\x80";  // a é 中 😀
  const std::u32string decoded = decode_utf8(text);
  EXPECT_EQ(decoded, (std::u32string{U'a', 0xE9, 0x4E2D, 0x1F600}));
  EXPECT_EQ(encode_utf8(decoded), text);
  // A lone continuation byte and a truncated sequence each become U+FFFD.
  EXPECT_EQ(decode_utf8("x\x80y\xE4\xB8"), (std::u32string{U'x', 0xFFFD, U'y', 0xFFFD, 0xFFFD}));
}

TEST(UnicodeText, WhitespaceAndControl) {
  for (char32_t c : {U' ', U'\t', U'\n', U'\r', char32_t{0xA0}, char32_t{0x3000}, char32_t{0x2009}})
    EXPECT_TRUE(is_bert_whitespace(c)) << static_cast<uint32_t>(c);
  EXPECT_FALSE(is_bert_whitespace(U'a'));
  EXPECT_FALSE(is_bert_whitespace(0x2028));  // a line separator is Zl, not Zs
  EXPECT_TRUE(is_python_whitespace(0x2028));
  for (char32_t c :
       {char32_t{0x00}, char32_t{0x07}, char32_t{0x7F}, char32_t{0x200B}, char32_t{0xE000}, char32_t{0x0378}})
    EXPECT_TRUE(is_bert_control(c)) << static_cast<uint32_t>(c);
  for (char32_t c : {U'\t', U'\n', U'\r', U'a', U' '}) EXPECT_FALSE(is_bert_control(c)) << static_cast<uint32_t>(c);
}

TEST(UnicodeText, Punctuation) {
  for (char32_t c :
       {U'!', U'$', U'+', U'^', U'`', U'~', U'.', char32_t{0xBF}, char32_t{0x2014}, char32_t{0x3001}, char32_t{0xFF0C}})
    EXPECT_TRUE(is_bert_punctuation(c)) << static_cast<uint32_t>(c);
  // Non-ASCII symbols are not punctuation: the euro sign, a math symbol, an emoji.
  for (char32_t c : {U'a', U'0', U' ', char32_t{0x20AC}, char32_t{0x2211}, char32_t{0x1F600}})
    EXPECT_FALSE(is_bert_punctuation(c)) << static_cast<uint32_t>(c);
}

TEST(UnicodeText, CjkIdeographs) {
  EXPECT_TRUE(is_cjk_ideograph(0x4E2D));   // 中
  EXPECT_TRUE(is_cjk_ideograph(0x20000));  // extension B
  EXPECT_FALSE(is_cjk_ideograph(0x3042));  // hiragana
  EXPECT_FALSE(is_cjk_ideograph(0xAC00));  // hangul
}

TEST(UnicodeText, LowerAndStripAccents) {
  EXPECT_EQ(lower(U"HeLLo ÀÉ ΣΑΣ"), U"hello àé σασ");
  EXPECT_EQ(lower(U"\u0130"), U"i\u0307");
  EXPECT_EQ(strip_accents(U"café naïve Ångström"), U"cafe naive Angstrom");
  EXPECT_EQ(strip_accents(U"\u1E9B\u0323"), U"\u017F");  // long s with dots: the marks go
}

}  // namespace
}  // namespace hearth::data::unicode
