#include "hearth/data/tokenizer/byte_level.h"

#include <array>

#include "hearth/data/tokenizer/utf8_lossy.h"

namespace hearth::data::byte_level {
namespace {

// A byte prints as itself when it is a visible ASCII character or a visible
// Latin-1 character (the soft hyphen U+00AD is invisible, so it is moved).
bool prints_as_itself(unsigned b) { return (b >= 0x21 && b <= 0x7E) || (b >= 0xA1 && b <= 0xAC) || b >= 0xAE; }

struct Tables {
  std::array<char32_t, 256> chars{};
  std::array<std::string, 256> utf8;
  // Every character of the alphabet is below U+0200 (256 + 68 moved bytes).
  std::array<int16_t, 512> bytes{};
};

const Tables& tables() {
  static const Tables t = [] {
    Tables t;
    t.bytes.fill(-1);
    char32_t next_moved = 0x100;
    for (unsigned b = 0; b < 256; ++b) {
      const char32_t c = prints_as_itself(b) ? char32_t{b} : next_moved++;
      t.chars[b] = c;
      utf8::append_code_point(c, t.utf8[b]);
      t.bytes[c] = static_cast<int16_t>(b);
    }
    return t;
  }();
  return t;
}

}  // namespace

char32_t byte_to_char(uint8_t byte) { return tables().chars[byte]; }

std::optional<uint8_t> char_to_byte(char32_t c) {
  if (c >= 512 || tables().bytes[c] < 0) return std::nullopt;
  return static_cast<uint8_t>(tables().bytes[c]);
}

void append_encoded(std::string_view bytes, std::string& out) {
  const Tables& t = tables();
  for (char b : bytes) out.append(t.utf8[static_cast<unsigned char>(b)]);
}

std::string encode(std::string_view bytes) {
  std::string out;
  out.reserve(bytes.size() * 2);
  append_encoded(bytes, out);
  return out;
}

std::optional<std::string> decode_token(std::string_view token) {
  std::string out;
  out.reserve(token.size());
  for (size_t i = 0; i < token.size();) {
    const size_t n = utf8::valid_sequence_length(token, i);
    if (n == 0) return std::nullopt;
    const std::optional<uint8_t> b = char_to_byte(utf8::code_point_at(token, i, n));
    if (!b) return std::nullopt;
    out.push_back(static_cast<char>(*b));
    i += n;
  }
  return out;
}

}  // namespace hearth::data::byte_level
