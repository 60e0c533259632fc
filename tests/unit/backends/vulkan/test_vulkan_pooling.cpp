// max_pool2d on Vulkan, forward and backward, against the CPU (padding,
// dilation, overlapping windows, ties, channels_last).
#include <gtest/gtest.h>

#include "hearth/core/memory_format.h"
#include "hearth/ops/elementwise.h"
#include "hearth/ops/factory.h"
#include "hearth/ops/nn_functional.h"
#include "tests/unit/backends/vulkan/vulkan_test_util.h"

namespace hearth {
namespace {

using vulkan_test::expect_close;
using vulkan_test::vk;

TEST(VulkanPooling, MaxPoolForwardAndBackwardMatchTheCpu) {
  HEARTH_SKIP_WITHOUT_VULKAN();
  struct Case {
    Pair kernel, stride, padding, dilation;
  };
  for (const Case& c : {Case{{2, 2}, {2, 2}, {0, 0}, {1, 1}}, Case{{3, 3}, {2, 1}, {1, 1}, {1, 1}},
                        Case{{3, 2}, {1, 2}, {1, 0}, {2, 1}}}) {
    for (bool channels_last : {false, true}) {
      // Small integers: many ties, where the first in window order must win.
      Tensor x = randint(-3, 4, {2, 3, 10, 9}).to(DType::float32);
      if (channels_last) x = x.contiguous(MemoryFormat::channels_last);
      Tensor xc = x.clone().requires_grad_(), xg = x.to(vk()).requires_grad_();
      const Tensor yc = max_pool2d(xc, c.kernel, c.stride, c.padding, c.dilation);
      const Tensor yg = max_pool2d(xg, c.kernel, c.stride, c.padding, c.dilation);
      const std::string what = "kernel " + std::to_string(c.kernel[0]) + "x" + std::to_string(c.kernel[1]) +
                               (channels_last ? " NHWC" : " NCHW");
      expect_close(yg, yc, 0, 0, what);
      const Tensor go = randn(yc.shape());
      mul(yc, go).sum().backward();
      mul(yg, go.to(vk())).sum().backward();
      expect_close(xg.grad(), xc.grad(), 1e-6, 1e-6, what + " backward");
    }
  }
}

}  // namespace
}  // namespace hearth

namespace hearth {
namespace {

using vulkan_test::expect_close;
using vulkan_test::vk;

TEST(VulkanPooling, AveragePoolsForwardAndBackwardMatchTheCpu) {
  HEARTH_SKIP_WITHOUT_VULKAN();
  for (bool channels_last : {false, true}) {
    Tensor x = randn({2, 3, 11, 9});
    if (channels_last) x = x.contiguous(MemoryFormat::channels_last);
    const std::string layout = channels_last ? " NHWC" : " NCHW";
    for (bool count_pad : {true, false}) {
      Tensor xc = x.clone().requires_grad_(), xg = x.to(vk()).requires_grad_();
      const Tensor yc = avg_pool2d(xc, {3, 2}, {2, 2}, {1, 1}, false, count_pad);
      const Tensor yg = avg_pool2d(xg, {3, 2}, {2, 2}, {1, 1}, false, count_pad);
      const std::string what = std::string("avg_pool2d") + (count_pad ? " counting padding" : "") + layout;
      expect_close(yg, yc, 1e-5, 1e-6, what);
      const Tensor go = randn(yc.shape());
      mul(yc, go).sum().backward();
      mul(yg, go.to(vk())).sum().backward();
      expect_close(xg.grad(), xc.grad(), 1e-5, 1e-6, what + " backward");
    }
    for (Pair out : {Pair{1, 1}, Pair{4, 3}}) {
      Tensor xc = x.clone().requires_grad_(), xg = x.to(vk()).requires_grad_();
      const Tensor yc = adaptive_avg_pool2d(xc, out), yg = adaptive_avg_pool2d(xg, out);
      const std::string what = "adaptive_avg_pool2d " + std::to_string(out[0]) + "x" + std::to_string(out[1]) + layout;
      expect_close(yg, yc, 1e-5, 1e-6, what);
      const Tensor go = randn(yc.shape());
      mul(yc, go).sum().backward();
      mul(yg, go.to(vk())).sum().backward();
      expect_close(xg.grad(), xc.grad(), 1e-5, 1e-6, what + " backward");
    }
  }
}

}  // namespace
}  // namespace hearth
