// "1 step", "3 steps": a count and its noun, singular for one, for every line
// a person reads.
#pragma once

#include <cstdint>
#include <sstream>
#include <string>

namespace hearth::train {

// `noun` is the singular; the plural is `plural`, or the singular with an "s".
inline std::string count_of(int64_t n, const std::string& noun, const std::string& plural = "") {
  if (n == 1) return "1 " + noun;
  return std::to_string(n) + " " + (plural.empty() ? noun + "s" : plural);
}

// A number as a person writes it: the shortest form that stream output gives
// (0.5, 3, 1e-05), for epochs and metric values in messages.
inline std::string number_text(double v) {
  std::ostringstream os;
  os << v;
  return os.str();
}

}  // namespace hearth::train
