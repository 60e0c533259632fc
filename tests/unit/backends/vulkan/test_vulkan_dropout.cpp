// dropout on Vulkan drops the elements the CPU drops for the same generator
// state, forward and backward.
#include <gtest/gtest.h>

#include "hearth/core/generator.h"
#include "hearth/ops/elementwise.h"
#include "hearth/ops/factory.h"
#include "hearth/ops/nn_functional.h"
#include "tests/unit/backends/vulkan/vulkan_test_util.h"

namespace hearth {
namespace {

using vulkan_test::expect_close;
using vulkan_test::vk;

TEST(VulkanDropout, SameSeedSameMaskAsTheCpu) {
  HEARTH_SKIP_WITHOUT_VULKAN();
  for (double p : {0.1, 0.5, 0.9}) {
    const Tensor x = randn({37, 13});
    const Tensor go = randn({37, 13});
    manual_seed(99);
    Tensor xc = x.clone().requires_grad_();
    const Tensor yc = dropout(xc, p, true);
    manual_seed(99);
    Tensor xg = x.to(vk()).requires_grad_();
    const Tensor yg = dropout(xg, p, true);
    expect_close(yg, yc, 1e-6, 0, "dropout p=" + std::to_string(p));
    mul(yc, go).sum().backward();
    mul(yg, go.to(vk())).sum().backward();
    expect_close(xg.grad(), xc.grad(), 1e-6, 0, "dropout backward p=" + std::to_string(p));
  }
}

}  // namespace
}  // namespace hearth
