// Helpers the elementwise tests share: value comparisons against host
// references, float64 leaves (contiguous or transposed views) for gradcheck.
#pragma once

#include <cmath>
#include <functional>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "hearth/autograd/gradcheck.h"
#include "hearth/ops/elementwise.h"
#include "hearth/ops/factory.h"
#include "hearth/ops/reduction.h"
#include "hearth/ops/view.h"

namespace hearth::test {

// Element-by-element comparison (NaN equals NaN) with absolute + relative tolerance.
inline ::testing::AssertionResult values_near(const Tensor& t, const std::vector<double>& expected, double tol = 1e-6) {
  std::vector<double> got = t.to_vector<double>();
  if (got.size() != expected.size())
    return ::testing::AssertionFailure() << "size " << got.size() << " vs expected " << expected.size();
  for (size_t i = 0; i < got.size(); ++i) {
    double e = expected[i], g = got[i];
    bool ok = (std::isnan(e) && std::isnan(g)) || g == e || std::abs(g - e) <= tol * (1 + std::abs(e));
    if (!ok) return ::testing::AssertionFailure() << "element " << i << ": got " << g << ", expected " << e;
  }
  return ::testing::AssertionSuccess();
}

inline std::vector<bool> bools(const Tensor& t) {
  EXPECT_EQ(t.dtype(), DType::bool_);
  return t.to_vector<bool>();
}

// A float64 leaf of `shape` holding `values` (row-major). With `strided` it is
// a view that is not contiguous: its last two dims swapped in memory, or, where
// size-1 dims make that contiguous anyway, every other element of a larger buffer.
inline Tensor leaf(const std::vector<double>& values, const Shape& shape, bool strided = false) {
  Tensor t = tensor(values, shape);
  if (strided) {
    const int64_t nd = static_cast<int64_t>(shape.size());
    Tensor v = nd >= 2 ? transpose(contiguous(transpose(t, nd - 1, nd - 2)), nd - 1, nd - 2) : t;
    if (v.is_contiguous()) {
      Tensor wide = unsqueeze(t, nd);
      wide = contiguous(expand(wide, [&] {
        Shape s = wide.shape();
        s.back() = 2;
        return s;
      }()));
      v = select(wide, nd, 0);  // stride 2 in the last dim
    }
    EXPECT_FALSE(v.is_contiguous());
    t = v;
  }
  return t.requires_grad_();
}

// `n` values in [lo, hi) with random signs when `both_signs`, never closer to 0 than lo.
inline std::vector<double> spread(int64_t n, double lo, double hi, bool both_signs = true) {
  std::vector<double> r = rand({n}, DType::float64).to_vector<double>();
  std::vector<double> s = rand({n}, DType::float64).to_vector<double>();
  for (int64_t i = 0; i < n; ++i) {
    r[i] = lo + (hi - lo) * r[i];
    if (both_signs && s[i] < 0.5) r[i] = -r[i];
  }
  return r;
}

inline ::testing::AssertionResult grad_ok(const std::function<Tensor(const std::vector<Tensor>&)>& fn,
                                          const std::vector<Tensor>& inputs) {
  GradcheckResult r = gradcheck(fn, inputs);
  if (r.ok) return ::testing::AssertionSuccess();
  return ::testing::AssertionFailure() << r.message;
}

// Whether `fn` throws E with `needle` in its message.
template <typename E>
::testing::AssertionResult throws_with(const std::function<void()>& fn, const std::string& needle) {
  try {
    fn();
  } catch (const E& e) {
    if (std::string(e.what()).find(needle) != std::string::npos) return ::testing::AssertionSuccess();
    return ::testing::AssertionFailure() << "message \"" << e.what() << "\" lacks \"" << needle << "\"";
  } catch (const std::exception& e) {
    return ::testing::AssertionFailure() << "threw another type: " << e.what();
  }
  return ::testing::AssertionFailure() << "did not throw";
}

}  // namespace hearth::test
