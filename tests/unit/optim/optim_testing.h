// The tiny problem of tests/fixtures/optim_reference.py: two float64
// parameters and a fixed gradient for each of three steps, and a runner that
// compares an optimizer's parameters after each step with PyTorch's.
#pragma once

#include <array>
#include <cmath>
#include <functional>
#include <memory>
#include <vector>

#include <gtest/gtest.h>

#include "hearth/ops/factory.h"
#include "hearth/optim/optimizer.h"

namespace hearth::testing {

using ParamValues = std::array<std::vector<double>, 2>;  // p0 (flattened 2x2) and p1 after a step

inline std::vector<Tensor> reference_params(DType dtype = DType::float64) {
  Tensor p0 = tensor(std::vector<double>{0.5, -1.0, 1.5, 2.0}, {2, 2}).to(dtype);
  Tensor p1 = tensor(std::vector<double>{0.1, -0.2, 0.3}).to(dtype);
  p0.requires_grad_(true);
  p1.requires_grad_(true);
  return {p0, p1};
}

inline void set_reference_grads(const std::vector<Tensor>& params, int step) {
  static const std::vector<double> g0[3] = {{0.1, -0.2, 0.3, 0.4}, {-0.5, 0.25, 0.05, -0.1}, {0.2, 0.2, -0.3, 0.6}};
  static const std::vector<double> g1[3] = {{1.0, -2.0, 0.5}, {0.3, 0.0, -0.7}, {-1.2, 0.4, 0.9}};
  params[0].set_grad(tensor(g0[step], {2, 2}).to(params[0].dtype()));
  params[1].set_grad(tensor(g1[step]).to(params[1].dtype()));
}

inline void expect_values(const Tensor& t, const std::vector<double>& ref, double tol, const char* what) {
  std::vector<double> v = t.to_vector<double>();
  ASSERT_EQ(v.size(), ref.size()) << what;
  for (size_t i = 0; i < v.size(); ++i) EXPECT_NEAR(v[i], ref[i], tol) << what << " element " << i;
}

// Builds an optimizer over the reference parameters, runs three steps and
// checks every parameter after each one.
inline void check_three_steps(const std::function<std::unique_ptr<optim::Optimizer>(std::vector<Tensor>)>& make,
                              const std::array<ParamValues, 3>& expected, double tol = 1e-12,
                              DType dtype = DType::float64) {
  std::vector<Tensor> params = reference_params(dtype);
  std::unique_ptr<optim::Optimizer> opt = make(params);
  for (int t = 0; t < 3; ++t) {
    set_reference_grads(params, t);
    opt->step();
    SCOPED_TRACE("step " + std::to_string(t + 1));
    expect_values(params[0], expected[t][0], tol, "p0");
    expect_values(params[1], expected[t][1], tol, "p1");
  }
}

}  // namespace hearth::testing
