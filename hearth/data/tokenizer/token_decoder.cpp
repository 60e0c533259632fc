#include "hearth/data/tokenizer/token_decoder.h"

#include <optional>

#include "hearth/data/tokenizer/byte_level.h"
#include "hearth/data/tokenizer/text_normalizer.h"
#include "hearth/data/tokenizer/utf8_lossy.h"

namespace hearth::data {
namespace {

// The characters of `token` (valid UTF-8) as code points.
std::u32string code_points(std::string_view token) {
  std::u32string out;
  for (size_t i = 0; i < token.size();) {
    const size_t n = utf8::valid_sequence_length(token, i);
    if (n == 0) {
      out.push_back(U'\uFFFD');
      ++i;
    } else {
      out.push_back(utf8::code_point_at(token, i, n));
      i += n;
    }
  }
  return out;
}

std::string to_utf8(std::u32string_view chars) {
  std::string out;
  for (char32_t c : chars) utf8::append_code_point(c, out);
  return out;
}

int hex_digit(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

// The byte a "<0xNN>" token stands for. Two characters parsed as a base-16
// number, as Rust's u8::from_str_radix reads them, which also takes "+N".
std::optional<uint8_t> fallback_byte(const std::string& token) {
  if (token.size() != 6 || token.compare(0, 3, "<0x") != 0 || token[5] != '>') return std::nullopt;
  const int hi = hex_digit(token[3]), lo = hex_digit(token[4]);
  if (token[3] == '+' && lo >= 0) return static_cast<uint8_t>(lo);
  if (hi < 0 || lo < 0) return std::nullopt;
  return static_cast<uint8_t>(hi * 16 + lo);
}

}  // namespace

bool ByteLevelDecoder::decode_chain(std::vector<std::string>& tokens, size_t /*max_bytes*/) const {
  std::string bytes;
  for (const std::string& token : tokens) {
    // A token with a character outside the alphabet (an added token such as
    // "<|im_start|>" is inside it; "é…" would not be) is taken as its own bytes.
    if (std::optional<std::string> decoded = byte_level::decode_token(token)) {
      bytes.append(*decoded);
    } else {
      bytes.append(token);
    }
  }
  tokens.assign(1, utf8::repair(bytes));
  return true;
}

bool ByteFallbackDecoder::decode_chain(std::vector<std::string>& tokens, size_t /*max_bytes*/) const {
  std::vector<std::string> out;
  out.reserve(tokens.size());
  std::string pending;  // bytes of the current run of "<0xNN>" tokens
  size_t pending_tokens = 0;
  auto flush = [&] {
    if (pending_tokens == 0) return;
    if (utf8::is_valid(pending)) {
      out.push_back(pending);
    } else {
      // A run that is not valid UTF-8 as a whole: one U+FFFD per byte token.
      for (size_t i = 0; i < pending_tokens; ++i) out.emplace_back("\xEF\xBF\xBD");
    }
    pending.clear();
    pending_tokens = 0;
  };
  for (std::string& token : tokens) {
    if (std::optional<uint8_t> b = fallback_byte(token)) {
      pending.push_back(static_cast<char>(*b));
      ++pending_tokens;
      continue;
    }
    flush();
    out.push_back(std::move(token));
  }
  flush();
  tokens = std::move(out);
  return true;
}

bool ReplaceDecoder::decode_chain(std::vector<std::string>& tokens, size_t max_bytes) const {
  std::string out;
  for (std::string& token : tokens) {
    if (!replace_matches(pattern_, token, content_, max_bytes, out)) return false;
    token.swap(out);
  }
  return true;
}

bool FuseDecoder::decode_chain(std::vector<std::string>& tokens, size_t /*max_bytes*/) const {
  std::string joined;
  for (const std::string& t : tokens) joined.append(t);
  tokens.assign(1, std::move(joined));
  return true;
}

bool StripDecoder::decode_chain(std::vector<std::string>& tokens, size_t /*max_bytes*/) const {
  for (std::string& token : tokens) {
    const std::u32string chars = code_points(token);
    size_t start_cut = 0;
    for (size_t i = 0; i < start_ && i < chars.size() && chars[i] == content_; ++i) start_cut = i + 1;
    size_t stop_cut = chars.size();
    for (size_t i = 0; i < stop_ && i < chars.size() && chars[chars.size() - 1 - i] == content_; ++i)
      stop_cut = chars.size() - 1 - i;
    token = stop_cut > start_cut ? to_utf8(std::u32string_view(chars).substr(start_cut, stop_cut - start_cut)) : "";
  }
  return true;
}

bool MetaspaceDecoder::decode_chain(std::vector<std::string>& tokens, size_t /*max_bytes*/) const {
  for (size_t i = 0; i < tokens.size(); ++i) {
    std::u32string out;
    for (char32_t c : code_points(tokens[i])) {
      if (c != replacement_) {
        out.push_back(c);
      } else if (i != 0 || scheme_ == PrependScheme::never) {
        out.push_back(U' ');
      }
    }
    tokens[i] = to_utf8(out);
  }
  return true;
}

bool DecoderSequence::decode_chain(std::vector<std::string>& tokens, size_t max_bytes) const {
  for (const auto& step : steps_)
    if (!step->decode_chain(tokens, max_bytes)) return false;
  return true;
}

}  // namespace hearth::data
