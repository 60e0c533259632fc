// bmm on Vulkan against the CPU: shapes that are not multiples of the tile,
// transposed operands (strides), batch broadcast, linear with its bias, and
// linear's gradients (which use bias sums and accumulation into .grad).
#include <gtest/gtest.h>

#include "hearth/ops/elementwise.h"
#include "hearth/ops/factory.h"
#include "hearth/ops/linalg.h"
#include "tests/unit/backends/vulkan/vulkan_test_util.h"

namespace hearth {
namespace {

using vulkan_test::expect_close;
using vulkan_test::vk;

TEST(VulkanMatmul, ProductsMatchTheCpu) {
  HEARTH_SKIP_WITHOUT_VULKAN();
  for (auto [m, k, n] : {std::tuple{1, 1, 1}, std::tuple{7, 13, 5}, std::tuple{65, 70, 129}, std::tuple{128, 64, 32}}) {
    const Tensor a = randn({m, k}), b = randn({k, n});
    const std::string what = std::to_string(m) + "x" + std::to_string(k) + "x" + std::to_string(n);
    expect_close(mm(a.to(vk()), b.to(vk())), mm(a, b), 1e-4, 1e-4, "mm " + what);
    // Transposed operands arrive as strides.
    const Tensor at = randn({k, m}), bt = randn({n, k});
    expect_close(mm(at.to(vk()).t(), bt.to(vk()).t()), mm(at.t(), bt.t()), 1e-4, 1e-4, "mm of transposes " + what);
  }
  const Tensor a = randn({3, 9, 17}), b = randn({3, 17, 6}), w = randn({17, 6});
  expect_close(bmm(a.to(vk()), b.to(vk())), bmm(a, b), 1e-4, 1e-4, "bmm");
  expect_close(matmul(a.to(vk()), w.to(vk())), matmul(a, w), 1e-4, 1e-4, "matmul broadcasting the weight");
}

TEST(VulkanMatmul, LinearForwardAndBackwardMatchTheCpu) {
  HEARTH_SKIP_WITHOUT_VULKAN();
  const Tensor x = randn({33, 20}), w = randn({10, 20}), bias = randn({10}), g = randn({33, 10});
  Tensor xc = x.clone().requires_grad_(), wc = w.clone().requires_grad_(), bc = bias.clone().requires_grad_();
  Tensor xg = x.to(vk()).requires_grad_(), wg = w.to(vk()).requires_grad_(), bg = bias.to(vk()).requires_grad_();
  const Tensor yc = linear(xc, wc, bc), yg = linear(xg, wg, bg);
  expect_close(yg, yc, 1e-4, 1e-4, "linear");
  // Twice, so the second backward accumulates into .grad.
  for (int i = 0; i < 2; ++i) {
    mul(linear(xc, wc, bc), g).sum().backward();
    mul(linear(xg, wg, bg), g.to(vk())).sum().backward();
  }
  expect_close(xg.grad(), xc.grad(), 1e-4, 1e-4, "grad x");
  expect_close(wg.grad(), wc.grad(), 1e-4, 1e-4, "grad weight");
  expect_close(bg.grad(), bc.grad(), 1e-4, 1e-4, "grad bias");
}

}  // namespace
}  // namespace hearth
