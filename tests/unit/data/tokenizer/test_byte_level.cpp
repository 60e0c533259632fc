// GPT-2's byte-to-character alphabet, checked against its definition, and
// the UTF-8 repair that byte-level decoding ends with.
#include <set>

#include <gtest/gtest.h>

#include "hearth/data/tokenizer/byte_level.h"
#include "hearth/data/tokenizer/utf8_lossy.h"

namespace hearth::data {
namespace {

TEST(ByteLevel, PrintableBytesStandForThemselves) {
  for (unsigned b = '!'; b <= '~'; ++b) EXPECT_EQ(byte_level::byte_to_char(static_cast<uint8_t>(b)), char32_t{b});
  for (unsigned b = 0xA1; b <= 0xAC; ++b) EXPECT_EQ(byte_level::byte_to_char(static_cast<uint8_t>(b)), char32_t{b});
  for (unsigned b = 0xAE; b <= 0xFF; ++b) EXPECT_EQ(byte_level::byte_to_char(static_cast<uint8_t>(b)), char32_t{b});
}

TEST(ByteLevel, TheOtherBytesTakeCodePointsFrom256InOrder) {
  // 0x00-0x20 are the first 33 moved bytes, then DEL and 0x80-0xA0, then the soft hyphen.
  EXPECT_EQ(byte_level::byte_to_char(0x00), U'\u0100');
  EXPECT_EQ(byte_level::byte_to_char('\n'), U'\u010A');  // 'Ċ'
  EXPECT_EQ(byte_level::byte_to_char(' '), U'\u0120');   // 'Ġ'
  EXPECT_EQ(byte_level::byte_to_char(0x7F), U'\u0121');
  EXPECT_EQ(byte_level::byte_to_char(0x80), U'\u0122');
  EXPECT_EQ(byte_level::byte_to_char(0xA0), U'\u0142');
  EXPECT_EQ(byte_level::byte_to_char(0xAD), U'\u0143');
  std::set<char32_t> seen;
  for (unsigned b = 0; b < 256; ++b) {
    const char32_t c = byte_level::byte_to_char(static_cast<uint8_t>(b));
    EXPECT_LE(c, U'\u0143');
    EXPECT_TRUE(seen.insert(c).second) << "two bytes map to U+" << std::hex << static_cast<uint32_t>(c);
    EXPECT_EQ(byte_level::char_to_byte(c), static_cast<uint8_t>(b));
  }
  EXPECT_EQ(byte_level::char_to_byte(U'\u0144'), std::nullopt);
  EXPECT_EQ(byte_level::char_to_byte(U' '), std::nullopt);  // space is moved, so ' ' is no character of the alphabet
}

TEST(ByteLevel, EncodeAndDecodeTokens) {
  EXPECT_EQ(byte_level::encode(" hello\n"), "\u0120hello\u010A");
  EXPECT_EQ(byte_level::encode("\xC3\xA9"), "\u00C3\u00A9");  // 'é' is two bytes, each a character
  std::string all;
  for (int b = 0; b < 256; ++b) all.push_back(static_cast<char>(b));
  EXPECT_EQ(byte_level::decode_token(byte_level::encode(all)), all);
  EXPECT_EQ(byte_level::decode_token("a\u0144"), std::nullopt);
}

TEST(Utf8Repair, EachMaximalInvalidSubsequenceBecomesOneReplacement) {
  const std::string r = "\xEF\xBF\xBD";
  EXPECT_EQ(utf8::repair("plain é 中 🦙"), "plain é 中 🦙");
  EXPECT_EQ(utf8::repair("\xE2\x82"), r);  // a cut-short euro sign: one
  EXPECT_EQ(utf8::repair("\xE2\x82"
                         "A"),
            r + "A");                                          // ended by an ASCII byte
  EXPECT_EQ(utf8::repair("\xC0\x80"), r + r);                  // C0 never starts a sequence
  EXPECT_EQ(utf8::repair("\xED\xA0\x80"), r + r + r);          // a surrogate: ED then two stray bytes
  EXPECT_EQ(utf8::repair("\xF0\x9F\xA6"), r);                  // a cut-short emoji
  EXPECT_EQ(utf8::repair("\xF4\x90\x80\x80"), r + r + r + r);  // above U+10FFFF
  EXPECT_EQ(utf8::repair("\x80\xBF"), r + r);
  EXPECT_TRUE(utf8::is_valid("\xF0\x9F\xA6\x99"));
  EXPECT_FALSE(utf8::is_valid("\xE0\x80\xAF"));  // overlong
}

}  // namespace
}  // namespace hearth::data
