#include "tests/support/tensor_compare.h"

#include <algorithm>
#include <cmath>
#include <vector>

namespace hearth::testing {

double relative_error(const Tensor& a, const Tensor& b) {
  std::vector<double> x = a.cpu().to_vector<double>(), y = b.cpu().to_vector<double>();
  double num = 0, den = 0;
  for (size_t i = 0; i < x.size() && i < y.size(); ++i) {
    if (std::isnan(x[i]) != std::isnan(y[i])) return INFINITY;
    if (std::isnan(x[i])) continue;
    if (std::isinf(x[i]) || std::isinf(y[i])) {
      if (x[i] != y[i]) return INFINITY;
      continue;
    }
    num += (x[i] - y[i]) * (x[i] - y[i]);
    den += y[i] * y[i];
  }
  if (x.size() != y.size()) return INFINITY;
  return std::sqrt(num) / std::max(std::sqrt(den), 1e-30);
}

double max_abs_diff(const Tensor& a, const Tensor& b) {
  std::vector<double> x = a.cpu().to_vector<double>(), y = b.cpu().to_vector<double>();
  double m = 0;
  for (size_t i = 0; i < x.size() && i < y.size(); ++i) m = std::max(m, std::abs(x[i] - y[i]));
  return m;
}

}  // namespace hearth::testing
