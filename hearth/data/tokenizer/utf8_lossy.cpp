#include "hearth/data/tokenizer/utf8_lossy.h"

namespace hearth::data::utf8 {
namespace {

// What a lead byte promises: the sequence length and the range its second
// byte must fall in (Unicode's table of well-formed byte sequences: no
// overlong forms, no surrogates, nothing above U+10FFFF).
struct Lead {
  size_t length = 0;  // 0: not a lead byte
  unsigned char low = 0x80, high = 0xBF;
};

Lead lead(unsigned char b) {
  if (b < 0x80) return {1};
  if (b >= 0xC2 && b <= 0xDF) return {2};
  if (b == 0xE0) return {3, 0xA0, 0xBF};
  if (b >= 0xE1 && b <= 0xEC) return {3};
  if (b == 0xED) return {3, 0x80, 0x9F};
  if (b >= 0xEE && b <= 0xEF) return {3};
  if (b == 0xF0) return {4, 0x90, 0xBF};
  if (b >= 0xF1 && b <= 0xF3) return {4};
  if (b == 0xF4) return {4, 0x80, 0x8F};
  return {};
}

// How many bytes from text[i] fit the sequence its lead byte starts (the lead
// included), stopping at the first that does not.
size_t fitting_bytes(std::string_view text, size_t i, const Lead& l) {
  size_t k = 1;
  for (; k < l.length && i + k < text.size(); ++k) {
    const auto c = static_cast<unsigned char>(text[i + k]);
    const bool ok = k == 1 ? (c >= l.low && c <= l.high) : (c >= 0x80 && c <= 0xBF);
    if (!ok) break;
  }
  return k;
}

}  // namespace

size_t valid_sequence_length(std::string_view text, size_t i) {
  const Lead l = lead(static_cast<unsigned char>(text[i]));
  if (l.length == 0) return 0;
  return fitting_bytes(text, i, l) == l.length ? l.length : 0;
}

size_t invalid_subsequence_length(std::string_view text, size_t i) {
  const Lead l = lead(static_cast<unsigned char>(text[i]));
  if (l.length == 0) return 1;
  return fitting_bytes(text, i, l);
}

bool is_valid(std::string_view text) {
  for (size_t i = 0; i < text.size();) {
    if (static_cast<unsigned char>(text[i]) < 0x80) {
      ++i;
      continue;
    }
    const size_t n = valid_sequence_length(text, i);
    if (n == 0) return false;
    i += n;
  }
  return true;
}

std::string repair(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  size_t clean_from = 0;  // start of the valid run not yet copied
  for (size_t i = 0; i < text.size();) {
    if (static_cast<unsigned char>(text[i]) < 0x80) {
      ++i;
      continue;
    }
    const size_t n = valid_sequence_length(text, i);
    if (n != 0) {
      i += n;
      continue;
    }
    out.append(text.substr(clean_from, i - clean_from));
    out.append("\xEF\xBF\xBD");
    i += invalid_subsequence_length(text, i);
    clean_from = i;
  }
  out.append(text.substr(clean_from));
  return out;
}

char32_t code_point_at(std::string_view text, size_t i, size_t length) {
  const auto b = [&](size_t k) { return static_cast<char32_t>(static_cast<unsigned char>(text[i + k])); };
  switch (length) {
    case 1:
      return b(0);
    case 2:
      return ((b(0) & 0x1F) << 6) | (b(1) & 0x3F);
    case 3:
      return ((b(0) & 0x0F) << 12) | ((b(1) & 0x3F) << 6) | (b(2) & 0x3F);
    default:
      return ((b(0) & 0x07) << 18) | ((b(1) & 0x3F) << 12) | ((b(2) & 0x3F) << 6) | (b(3) & 0x3F);
  }
}

void append_code_point(char32_t c, std::string& out) {
  if (c < 0x80) {
    out.push_back(static_cast<char>(c));
  } else if (c < 0x800) {
    out.push_back(static_cast<char>(0xC0 | (c >> 6)));
    out.push_back(static_cast<char>(0x80 | (c & 0x3F)));
  } else if (c < 0x10000) {
    out.push_back(static_cast<char>(0xE0 | (c >> 12)));
    out.push_back(static_cast<char>(0x80 | ((c >> 6) & 0x3F)));
    out.push_back(static_cast<char>(0x80 | (c & 0x3F)));
  } else {
    out.push_back(static_cast<char>(0xF0 | (c >> 18)));
    out.push_back(static_cast<char>(0x80 | ((c >> 12) & 0x3F)));
    out.push_back(static_cast<char>(0x80 | ((c >> 6) & 0x3F)));
    out.push_back(static_cast<char>(0x80 | (c & 0x3F)));
  }
}

}  // namespace hearth::data::utf8
