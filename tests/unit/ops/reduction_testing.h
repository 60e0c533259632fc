// Helpers the reduction, scan, sort and indexing tests share: value checks
// against hand-computed references, random float64 leaves laid out contiguously
// or not, a gradcheck assertion, and an exception-message assertion.
#pragma once

#include <gtest/gtest.h>

#include <cmath>
#include <functional>
#include <string>
#include <vector>

#include "hearth/autograd/gradcheck.h"
#include "hearth/core/generator.h"
#include "hearth/ops/elementwise.h"
#include "hearth/ops/factory.h"
#include "hearth/ops/view.h"

namespace hearth::red_test {

// Element-by-element comparison (NaN equals NaN) with absolute + relative tolerance.
inline ::testing::AssertionResult near(const Tensor& t, const std::vector<double>& expected, double tol = 1e-6) {
  std::vector<double> got = t.to_vector<double>();
  if (got.size() != expected.size())
    return ::testing::AssertionFailure() << "size " << got.size() << " vs expected " << expected.size();
  for (size_t i = 0; i < got.size(); ++i) {
    const double e = expected[i], g = got[i];
    const bool ok = (std::isnan(e) && std::isnan(g)) || g == e || std::abs(g - e) <= tol * (1 + std::abs(e));
    if (!ok) return ::testing::AssertionFailure() << "element " << i << ": got " << g << ", expected " << e;
  }
  return ::testing::AssertionSuccess();
}

inline std::vector<int64_t> ints(const Tensor& t) {
  EXPECT_EQ(t.dtype(), DType::int64);
  return t.to_vector<int64_t>();
}

// 0, 1, 2, ... in `shape`, as `dtype`.
inline Tensor seq(const Shape& shape, DType dtype = DType::float32) {
  std::vector<double> v(numel_of(shape));
  for (size_t i = 0; i < v.size(); ++i) v[i] = static_cast<double>(i);
  Tensor t = tensor(v, shape);
  return dtype == DType::float64 ? t : cast(t, dtype);
}

// `t`'s values in a tensor whose last dim is strided (every other element of a
// wider buffer), so it is not contiguous. Zero-dim and empty tensors come back as is.
inline Tensor strided_copy(const Tensor& t) {
  if (t.dim() == 0 || t.numel() == 0) return t;
  Shape wide = t.shape();
  wide.back() *= 2;
  Tensor buf = zeros(wide, t.dtype());
  Tensor view = slice(buf, -1, 0, wide.back(), 2);
  copy_(view, t);
  EXPECT_FALSE(view.is_contiguous());
  return view;
}

// A float64 leaf of `shape` with random normal values (no ties), contiguous or not.
inline Tensor random_leaf(const Shape& shape, bool non_contiguous = false) {
  Tensor t = randn(shape, DType::float64);
  if (non_contiguous) t = strided_copy(t);
  return t.requires_grad_();
}

inline ::testing::AssertionResult grad_ok(const std::function<Tensor(const std::vector<Tensor>&)>& fn,
                                          const std::vector<Tensor>& inputs) {
  GradcheckResult r = gradcheck(fn, inputs);
  if (r.ok) return ::testing::AssertionSuccess();
  return ::testing::AssertionFailure() << r.message;
}

// Runs fn, expecting exception E whose message contains `needle`.
template <typename E>
::testing::AssertionResult throws_with(const std::function<void()>& fn, const std::string& needle) {
  try {
    fn();
  } catch (const E& e) {
    if (std::string(e.what()).find(needle) != std::string::npos) return ::testing::AssertionSuccess();
    return ::testing::AssertionFailure() << "message \"" << e.what() << "\" lacks \"" << needle << "\"";
  } catch (const std::exception& e) {
    return ::testing::AssertionFailure() << "threw a different exception: " << e.what();
  }
  return ::testing::AssertionFailure() << "did not throw";
}

}  // namespace hearth::red_test
