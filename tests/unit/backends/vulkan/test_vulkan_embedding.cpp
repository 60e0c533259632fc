// embedding on Vulkan, forward and backward (repeated indices, padding_idx),
// against the CPU.
#include <gtest/gtest.h>

#include "hearth/ops/elementwise.h"
#include "hearth/ops/factory.h"
#include "hearth/ops/nn_functional.h"
#include "tests/unit/backends/vulkan/vulkan_test_util.h"

namespace hearth {
namespace {

using vulkan_test::expect_close;
using vulkan_test::vk;

TEST(VulkanEmbedding, ForwardAndBackwardMatchTheCpu) {
  HEARTH_SKIP_WITHOUT_VULKAN();
  for (int64_t padding : {-1, 3}) {
    const Tensor w = randn({20, 9});
    const Tensor idx = randint(0, 20, {6, 11});  // many repeats
    Tensor wc = w.clone().requires_grad_(), wg = w.to(vk()).requires_grad_();
    const Tensor yc = embedding(idx, wc, padding), yg = embedding(idx.to(vk()), wg, padding);
    const std::string what = "embedding padding_idx=" + std::to_string(padding);
    expect_close(yg, yc, 0, 0, what);
    const Tensor go = randn(yc.shape());
    mul(yc, go).sum().backward();
    mul(yg, go.to(vk())).sum().backward();
    expect_close(wg.grad(), wc.grad(), 1e-5, 1e-5, what + " backward");
  }
}

}  // namespace
}  // namespace hearth
