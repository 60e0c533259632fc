// The row reductions on Vulkan (sum, amax/amin, max_dim/min_dim) against the
// CPU: rows long and short, reduced dims anywhere, NaN and ties.
#include <limits>

#include <gtest/gtest.h>

#include "hearth/ops/elementwise.h"
#include "hearth/ops/factory.h"
#include "hearth/ops/reduction.h"
#include "tests/unit/backends/vulkan/vulkan_test_util.h"

namespace hearth {
namespace {

using vulkan_test::expect_close;
using vulkan_test::vk;

TEST(VulkanReduceSum, MatchesTheCpu) {
  HEARTH_SKIP_WITHOUT_VULKAN();
  for (const Shape& s : {Shape{1000}, Shape{37, 3}, Shape{5, 700, 2}, Shape{3, 0}}) {
    const Tensor x = randn(s);
    const Tensor xv = x.to(vk());
    expect_close(sum(xv), sum(x), 1e-5, 1e-4, "sum all " + x.shape_string());
    expect_close(sum(xv, {0}), sum(x, {0}), 1e-5, 1e-5, "sum dim 0 " + x.shape_string());
    expect_close(sum(xv, {-1}, true), sum(x, {-1}, true), 1e-5, 1e-5, "sum last dim " + x.shape_string());
    if (x.numel() > 0) expect_close(mean(xv, {0}), mean(x, {0}), 1e-5, 1e-6, "mean " + x.shape_string());
  }
  const Tensor i = randint(-1000, 1000, {17, 33});
  expect_close(sum(i.to(vk()), {1}), sum(i, {1}), 0, 0, "int64 sum");
  const Tensor b = gt(randn({9, 40}), 0.0f);
  expect_close(sum(b.to(vk()), {1}), sum(b, {1}), 0, 0, "bool sum (as int64)");
}

TEST(VulkanReduceMinMax, ValuesIndicesTiesAndNaN) {
  HEARTH_SKIP_WITHOUT_VULKAN();
  Tensor x = randint(0, 5, {13, 300}).to(DType::float32);  // many ties
  const Tensor xv = x.to(vk());
  expect_close(amax(xv, {1}), amax(x, {1}), 0, 0, "amax");
  expect_close(amin(xv, {0}), amin(x, {0}), 0, 0, "amin");
  auto [v, idx] = max_dim(xv, 1);
  auto [cv, cidx] = max_dim(x, 1);
  expect_close(v, cv, 0, 0, "max_dim values");
  expect_close(idx, cidx, 0, 0, "max_dim indices (first of ties)");
  auto [v2, idx2] = min_dim(xv, 0);
  auto [cv2, cidx2] = min_dim(x, 0);
  expect_close(v2, cv2, 0, 0, "min_dim values");
  expect_close(idx2, cidx2, 0, 0, "min_dim indices");
  expect_close(argmax(xv, 1), argmax(x, 1), 0, 0, "argmax");
  // NaN propagates, and the first NaN's index wins.
  Tensor n = randn({4, 50});
  n.select(0, 1).narrow(0, 7, 1).fill_(std::numeric_limits<float>::quiet_NaN());
  n.select(0, 1).narrow(0, 30, 1).fill_(std::numeric_limits<float>::quiet_NaN());
  auto [nv, ni] = max_dim(n.to(vk()), 1);
  auto [cnv, cni] = max_dim(n, 1);
  expect_close(nv, cnv, 0, 0, "NaN values");
  expect_close(ni, cni, 0, 0, "NaN indices");
  expect_close(amin(n.to(vk()), {1}), amin(n, {1}), 0, 0, "NaN amin");
  const Tensor ints = randint(-50, 50, {6, 77});
  expect_close(amax(ints.to(vk()), {1}), amax(ints, {1}), 0, 0, "int64 amax");
  expect_close(argmax(ints.to(vk()), 1), argmax(ints, 1), 0, 0, "int64 argmax");
}

}  // namespace
}  // namespace hearth

namespace hearth {
namespace {

using vulkan_test::expect_close;
using vulkan_test::vk;

TEST(VulkanReduceNorm, EveryPMatchesTheCpu) {
  HEARTH_SKIP_WITHOUT_VULKAN();
  Tensor x = randn({9, 130});
  x.select(0, 2).narrow(0, 5, 10).fill_(0.0f);
  const Tensor xv = x.to(vk());
  const double inf = std::numeric_limits<double>::infinity();
  for (double p : {2.0, 1.0, 0.0, 3.0, 0.5, inf, -inf}) {
    const std::string what = "norm p=" + std::to_string(p);
    expect_close(norm(xv, p, {1}), norm(x, p, {1}), 1e-5, 1e-5, what);
    expect_close(norm(xv, p), norm(x, p), 1e-5, 1e-5, what + " over everything");
  }
}

}  // namespace
}  // namespace hearth
