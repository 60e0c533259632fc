// Helpers shared by the nn tests.
#pragma once

#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "hearth/core/tensor.h"

namespace hearth::testing {

inline bool contains(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

// Elementwise |a - b| <= tol, reporting the worst element.
inline void expect_close(const Tensor& a, const Tensor& b, double tol = 0.0) {
  ASSERT_EQ(a.shape(), b.shape());
  std::vector<double> va = a.to_vector<double>(), vb = b.to_vector<double>();
  size_t worst = 0;
  double err = 0;
  for (size_t i = 0; i < va.size(); ++i) {
    const double e =
        std::isnan(va[i]) != std::isnan(vb[i]) ? INFINITY : (std::isnan(va[i]) ? 0 : std::abs(va[i] - vb[i]));
    if (e > err) err = e, worst = i;
  }
  EXPECT_LE(err, tol) << "element " << worst << ": " << va[worst] << " vs " << vb[worst];
}

struct Moments {
  double mean, std, min, max;
};

inline Moments moments_of(const Tensor& t) {
  std::vector<double> v = t.to_vector<double>();
  double s = 0, ss = 0;
  for (double x : v) s += x;
  const double m = s / static_cast<double>(v.size());
  for (double x : v) ss += (x - m) * (x - m);
  return {m, std::sqrt(ss / static_cast<double>(v.size())), *std::min_element(v.begin(), v.end()),
          *std::max_element(v.begin(), v.end())};
}

}  // namespace hearth::testing
