#include "hearth/core/env.h"

#include <algorithm>
#include <cctype>
#include <cstdlib>

#include "hearth/core/errors.h"

namespace hearth {

bool env_flag(const char* name) {
  const char* v = std::getenv(name);
  if (!v) return false;
  std::string s(v);
  std::transform(s.begin(), s.end(), s.begin(), [](unsigned char c) { return std::tolower(c); });
  if (s == "1" || s == "true" || s == "yes" || s == "on") return true;
  if (s.empty() || s == "0" || s == "false" || s == "no" || s == "off") return false;
  HEARTH_THROW(ValueError, "[env] ", name, "='", v,
               "' is not a boolean: expected 1, true, yes or on to turn it on, 0, false, no or off to turn it off");
}

std::string env_string(const char* name, const std::string& fallback) {
  const char* v = std::getenv(name);
  return v ? std::string(v) : fallback;
}

}  // namespace hearth
