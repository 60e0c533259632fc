// The Levenshtein distance between two names (insertions, deletions and
// substitutions), for the "did you mean" of a misspelled flag, key or metric.
#pragma once

#include <cstddef>
#include <string>

namespace hearth {

size_t edit_distance(const std::string& a, const std::string& b);

}  // namespace hearth
