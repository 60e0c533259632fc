// The "did you mean" of a misspelled name: the closest of the known names by
// edit distance, when it is close enough to be the one meant.
#pragma once

#include <string>
#include <vector>

namespace hearth::cli {

// " (did you mean 'learning_rate'?)" for a near miss among `known`, else "".
std::string did_you_mean(const std::string& name, const std::vector<std::string>& known);

}  // namespace hearth::cli
