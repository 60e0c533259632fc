#include "hearth/core/edit_distance.h"

#include <algorithm>
#include <vector>

namespace hearth {

size_t edit_distance(const std::string& a, const std::string& b) {
  // One row of the table at a time: row[j] is the distance from a's first i
  // characters to b's first j.
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

}  // namespace hearth
