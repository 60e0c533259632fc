#include "apps/common/closest_name.h"

#include <algorithm>

#include "hearth/core/edit_distance.h"

namespace hearth::cli {

std::string did_you_mean(const std::string& name, const std::vector<std::string>& known) {
  // Beyond 3 edits (or a third of the name) a suggestion is more often wrong than right.
  const size_t limit = std::min<size_t>(3, std::max<size_t>(1, name.size() / 3));
  const std::string* best = nullptr;
  size_t best_distance = limit + 1;
  for (const std::string& k : known) {
    const size_t d = edit_distance(name, k);
    if (d < best_distance) {
      best_distance = d;
      best = &k;
    }
  }
  return best ? " (did you mean '" + *best + "'?)" : "";
}

}  // namespace hearth::cli
