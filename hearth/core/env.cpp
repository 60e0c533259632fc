#include "hearth/core/env.h"

#include <algorithm>
#include <cctype>
#include <cstdlib>

namespace hearth {

bool env_flag(const char* name) {
  const char* v = std::getenv(name);
  if (!v) return false;
  std::string s(v);
  std::transform(s.begin(), s.end(), s.begin(), [](unsigned char c) { return std::tolower(c); });
  return s == "1" || s == "true" || s == "yes" || s == "on";
}

std::string env_string(const char* name, const std::string& fallback) {
  const char* v = std::getenv(name);
  return v ? std::string(v) : fallback;
}

}  // namespace hearth
