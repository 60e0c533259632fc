#include "hearth/data/tokenizer/unicode_text.h"

#include <algorithm>
#include <cstdlib>
#include <memory>

#include <utf8proc.h>

#include "hearth/core/errors.h"

namespace hearth::data::unicode {
namespace {

utf8proc_category_t category(char32_t c) { return utf8proc_category(static_cast<utf8proc_int32_t>(c)); }

// One UTF-8 sequence starting at text[i]: its code point and length, or
// length 0 when the bytes there are not valid UTF-8.
struct Decoded {
  char32_t code = 0;
  size_t length = 0;
};

Decoded decode_one(std::string_view text, size_t i) {
  utf8proc_int32_t code = 0;
  const auto* bytes = reinterpret_cast<const utf8proc_uint8_t*>(text.data() + i);
  utf8proc_ssize_t n = utf8proc_iterate(bytes, static_cast<utf8proc_ssize_t>(text.size() - i), &code);
  if (n <= 0) return {};
  return {static_cast<char32_t>(code), static_cast<size_t>(n)};
}

// Runs utf8proc_map over `text` with `options` and decodes the result.
std::u32string map_text(std::u32string_view text, int options) {
  const std::string utf8 = encode_utf8(text);
  utf8proc_uint8_t* out = nullptr;
  utf8proc_ssize_t n =
      utf8proc_map(reinterpret_cast<const utf8proc_uint8_t*>(utf8.data()), static_cast<utf8proc_ssize_t>(utf8.size()),
                   &out, static_cast<utf8proc_option_t>(options));
  HEARTH_CHECK(n >= 0, ValueError, "[tokenizer] Unicode normalisation failed: ", utf8proc_errmsg(n));
  std::unique_ptr<utf8proc_uint8_t, decltype(&std::free)> owned(out, &std::free);
  return decode_utf8(std::string_view(reinterpret_cast<const char*>(out), static_cast<size_t>(n)));
}

}  // namespace

std::u32string decode_utf8(std::string_view text) {
  std::u32string out;
  out.reserve(text.size());
  for (size_t i = 0; i < text.size();) {
    Decoded d = decode_one(text, i);
    if (d.length == 0) {
      out.push_back(U'\uFFFD');
      ++i;
    } else {
      out.push_back(d.code);
      i += d.length;
    }
  }
  return out;
}

std::string encode_utf8(char32_t c) {
  utf8proc_uint8_t buf[4];
  utf8proc_ssize_t n = utf8proc_encode_char(static_cast<utf8proc_int32_t>(c), buf);
  return std::string(reinterpret_cast<const char*>(buf), static_cast<size_t>(n));
}

std::string encode_utf8(std::u32string_view text) {
  std::string out;
  out.reserve(text.size());
  for (char32_t c : text) {
    if (c < 0x80) {
      out.push_back(static_cast<char>(c));
    } else {
      out += encode_utf8(c);
    }
  }
  return out;
}

bool is_bert_whitespace(char32_t c) {
  if (c == U' ' || c == U'\t' || c == U'\n' || c == U'\r') return true;
  if (c < 0x80) return false;
  return category(c) == UTF8PROC_CATEGORY_ZS;
}

bool is_bert_control(char32_t c) {
  if (c == U'\t' || c == U'\n' || c == U'\r') return false;
  if (c < 0x80) return c < 0x20 || c == 0x7F;
  switch (category(c)) {
    case UTF8PROC_CATEGORY_CC:
    case UTF8PROC_CATEGORY_CF:
    case UTF8PROC_CATEGORY_CN:
    case UTF8PROC_CATEGORY_CO:
    case UTF8PROC_CATEGORY_CS:
      return true;
    default:
      return false;
  }
}

bool is_bert_punctuation(char32_t c) {
  if ((c >= 33 && c <= 47) || (c >= 58 && c <= 64) || (c >= 91 && c <= 96) || (c >= 123 && c <= 126)) return true;
  if (c < 0x80) return false;
  switch (category(c)) {
    case UTF8PROC_CATEGORY_PC:
    case UTF8PROC_CATEGORY_PD:
    case UTF8PROC_CATEGORY_PS:
    case UTF8PROC_CATEGORY_PE:
    case UTF8PROC_CATEGORY_PI:
    case UTF8PROC_CATEGORY_PF:
    case UTF8PROC_CATEGORY_PO:
      return true;
    default:
      return false;
  }
}

bool is_cjk_ideograph(char32_t c) {
  return (c >= 0x4E00 && c <= 0x9FFF) || (c >= 0x3400 && c <= 0x4DBF) || (c >= 0x20000 && c <= 0x2A6DF) ||
         (c >= 0x2A700 && c <= 0x2B73F) || (c >= 0x2B740 && c <= 0x2B81F) || (c >= 0x2B820 && c <= 0x2CEAF) ||
         (c >= 0xF900 && c <= 0xFAFF) || (c >= 0x2F800 && c <= 0x2FA1F);
}

bool is_python_whitespace(char32_t c) {
  if ((c >= 0x09 && c <= 0x0D) || (c >= 0x1C && c <= 0x20) || c == 0x85) return true;
  const utf8proc_category_t cat = category(c);
  return cat == UTF8PROC_CATEGORY_ZS || cat == UTF8PROC_CATEGORY_ZL || cat == UTF8PROC_CATEGORY_ZP;
}

std::u32string lower(std::u32string_view text) {
  std::u32string out;
  out.reserve(text.size());
  for (char32_t c : text) {
    if (c < 0x80) {
      out.push_back(c >= U'A' && c <= U'Z' ? c + (U'a' - U'A') : c);
    } else if (c == 0x130) {  // LATIN CAPITAL LETTER I WITH DOT ABOVE
      out += U"i\u0307";
    } else {
      out.push_back(static_cast<char32_t>(utf8proc_tolower(static_cast<utf8proc_int32_t>(c))));
    }
  }
  return out;
}

std::u32string strip_accents(std::u32string_view text) {
  // ASCII has nothing to decompose: most words skip the normalisation.
  if (std::all_of(text.begin(), text.end(), [](char32_t c) { return c < 0x80; })) return std::u32string(text);
  std::u32string decomposed = map_text(text, UTF8PROC_STABLE | UTF8PROC_DECOMPOSE);
  std::u32string out;
  out.reserve(decomposed.size());
  for (char32_t c : decomposed)
    if (category(c) != UTF8PROC_CATEGORY_MN) out.push_back(c);
  return out;
}

}  // namespace hearth::data::unicode
