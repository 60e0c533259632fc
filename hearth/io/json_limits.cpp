#include "hearth/io/json_limits.h"

#include <algorithm>

#include "hearth/core/errors.h"

namespace hearth::io {

int json_nesting_depth(std::string_view text) {
  int depth = 0, deepest = 0;
  bool in_string = false, escaped = false;
  for (char c : text) {
    if (in_string) {
      if (escaped) {
        escaped = false;
      } else if (c == '\\') {
        escaped = true;
      } else if (c == '"') {
        in_string = false;
      }
      continue;
    }
    switch (c) {
      case '"':
        in_string = true;
        break;
      case '[':
      case '{':
        deepest = std::max(deepest, ++depth);
        break;
      case ']':
      case '}':
        if (depth > 0) --depth;
        break;
      default:
        break;
    }
  }
  return deepest;
}

std::string excerpt(std::string_view text, size_t max_chars) {
  if (text.size() <= max_chars) return std::string(text);
  return detail::concat(text.substr(0, max_chars), "... (", text.size(), " characters in all)");
}

std::string json_limits_problem(std::string_view text, size_t max_bytes) {
  if (text.size() > max_bytes)
    return detail::concat(text.size(), " bytes of JSON, more than the ", max_bytes, " allowed");
  const int depth = json_nesting_depth(text);
  if (depth > kMaxJsonDepth)
    return detail::concat("arrays and objects nested ", depth, " levels deep, more than the ", kMaxJsonDepth,
                          " allowed");
  return "";
}

void check_json_limits(std::string_view text, const std::string& where, size_t max_bytes) {
  const std::string problem = json_limits_problem(text, max_bytes);
  HEARTH_CHECK(problem.empty(), ValueError, where, ": ", problem);
}

std::string read_json_text(std::istream& in, const std::string& where, size_t max_bytes) {
  std::string text;
  char buffer[1 << 16];
  while (in && text.size() <= max_bytes) {
    in.read(buffer, sizeof buffer);
    text.append(buffer, static_cast<size_t>(in.gcount()));
  }
  HEARTH_CHECK(!in.bad(), IoError, where, ": read failed");
  if (text.size() > max_bytes)
    HEARTH_THROW(ValueError, where, ": more than ", max_bytes, " bytes of JSON, more than allowed");
  check_json_limits(text, where, max_bytes);
  return text;
}

}  // namespace hearth::io
