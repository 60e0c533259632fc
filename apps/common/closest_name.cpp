#include "apps/common/closest_name.h"

#include <algorithm>

namespace hearth::cli {
namespace {

// Levenshtein distance: insertions, deletions and substitutions.
size_t edit_distance(const std::string& a, const std::string& b) {
  std::vector<size_t> row(b.size() + 1);
  for (size_t j = 0; j <= b.size(); ++j) row[j] = j;
  for (size_t i = 1; i <= a.size(); ++i) {
    size_t diag = row[0];
    row[0] = i;
    for (size_t j = 1; j <= b.size(); ++j) {
      const size_t up = row[j];
      row[j] = std::min({row[j] + 1, row[j - 1] + 1, diag + (a[i - 1] == b[j - 1] ? 0 : 1)});
      diag = up;
    }
  }
  return row[b.size()];
}

}  // namespace

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
