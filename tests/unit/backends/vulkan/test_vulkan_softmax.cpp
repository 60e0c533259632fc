// softmax and log_softmax on Vulkan, forward and backward, against the CPU.
#include <gtest/gtest.h>

#include "hearth/ops/elementwise.h"
#include "hearth/ops/factory.h"
#include "hearth/ops/nn_functional.h"
#include "tests/unit/backends/vulkan/vulkan_test_util.h"

namespace hearth {
namespace {

using vulkan_test::expect_close;
using vulkan_test::vk;

TEST(VulkanSoftmax, ForwardAndBackwardMatchTheCpu) {
  HEARTH_SKIP_WITHOUT_VULKAN();
  for (int64_t dim : {1, 0, 2}) {
    const Tensor x = mul(randn({6, 300, 3}), 4.0f);
    const Tensor g = randn({6, 300, 3});
    const std::string at = " along dim " + std::to_string(dim);
    expect_close(softmax(x.to(vk()), dim), softmax(x, dim), 1e-5, 1e-7, "softmax" + at);
    expect_close(log_softmax(x.to(vk()), dim), log_softmax(x, dim), 1e-5, 1e-5, "log_softmax" + at);
    for (bool log_form : {false, true}) {
      Tensor xc = x.clone().requires_grad_();
      Tensor xg = x.to(vk()).requires_grad_();
      mul(log_form ? log_softmax(xc, dim) : softmax(xc, dim), g).sum().backward();
      mul(log_form ? log_softmax(xg, dim) : softmax(xg, dim), g.to(vk())).sum().backward();
      expect_close(xg.grad(), xc.grad(), 1e-4, 1e-5,
                   std::string(log_form ? "log_softmax" : "softmax") + " backward" + at);
    }
  }
}

}  // namespace
}  // namespace hearth
