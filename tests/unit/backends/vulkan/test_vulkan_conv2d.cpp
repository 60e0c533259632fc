// conv2d on Vulkan, forward and the three backward passes, against the CPU:
// stride, padding, dilation, groups, NCHW and channels_last.
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

struct ConvCase {
  Shape x, w;
  Pair stride, padding, dilation;
  int64_t groups;
};

TEST(VulkanConv2d, ForwardAndBackwardMatchTheCpu) {
  HEARTH_SKIP_WITHOUT_VULKAN();
  const std::vector<ConvCase> cases = {
      {{2, 3, 9, 8}, {4, 3, 3, 3}, {1, 1}, {1, 1}, {1, 1}, 1},
      {{1, 4, 11, 10}, {6, 2, 3, 2}, {2, 1}, {0, 1}, {1, 2}, 2},
      {{3, 1, 7, 7}, {5, 1, 5, 5}, {2, 2}, {2, 2}, {1, 1}, 1},
  };
  for (bool channels_last : {false, true}) {
    for (const ConvCase& c : cases) {
      const std::string what = std::string(channels_last ? "NHWC " : "NCHW ") + shape_str(c.x) + " * " + shape_str(c.w);
      Tensor x = randn(c.x), w = randn(c.w), b = randn({c.w[0]});
      if (channels_last) x = x.contiguous(MemoryFormat::channels_last);
      Tensor xc = x.clone().requires_grad_(), wc = w.clone().requires_grad_(), bc = b.clone().requires_grad_();
      Tensor xg = x.to(vk()).requires_grad_(), wg = w.to(vk()).requires_grad_(), bg = b.to(vk()).requires_grad_();
      const Tensor yc = conv2d(xc, wc, bc, c.stride, c.padding, c.dilation, c.groups);
      const Tensor yg = conv2d(xg, wg, bg, c.stride, c.padding, c.dilation, c.groups);
      expect_close(yg, yc, 1e-4, 1e-4, what);
      const Tensor go = randn(yc.shape());
      mul(yc, go).sum().backward();
      mul(yg, go.to(vk())).sum().backward();
      expect_close(xg.grad(), xc.grad(), 1e-4, 1e-4, what + " grad x");
      expect_close(wg.grad(), wc.grad(), 1e-4, 1e-4, what + " grad weight");
      expect_close(bg.grad(), bc.grad(), 1e-4, 1e-4, what + " grad bias");
    }
  }
}

}  // namespace
}  // namespace hearth
