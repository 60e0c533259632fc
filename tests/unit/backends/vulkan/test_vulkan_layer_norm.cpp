// layer_norm on Vulkan, forward and backward, with and without its affine
// parameters, against the CPU.
#include <gtest/gtest.h>

#include "hearth/ops/elementwise.h"
#include "hearth/ops/factory.h"
#include "hearth/ops/nn_functional.h"
#include "tests/unit/backends/vulkan/vulkan_test_util.h"

namespace hearth {
namespace {

using vulkan_test::expect_close;
using vulkan_test::vk;

TEST(VulkanLayerNorm, ForwardAndBackwardMatchTheCpu) {
  HEARTH_SKIP_WITHOUT_VULKAN();
  for (bool affine : {true, false}) {
    const Tensor x = add(mul(randn({4, 9, 70}), 3.0f), 2.0f), w = randn({70}), b = randn({70});
    Tensor xc = x.clone().requires_grad_(), xg = x.to(vk()).requires_grad_();
    Tensor wc = w.clone().requires_grad_(), wg = w.to(vk()).requires_grad_();
    Tensor bc = b.clone().requires_grad_(), bg = b.to(vk()).requires_grad_();
    const Tensor yc = layer_norm(xc, {70}, affine ? wc : Tensor(), affine ? bc : Tensor());
    const Tensor yg = layer_norm(xg, {70}, affine ? wg : Tensor(), affine ? bg : Tensor());
    const std::string what = affine ? "layer_norm affine" : "layer_norm";
    expect_close(yg, yc, 1e-4, 1e-5, what);
    const Tensor go = randn(x.shape());
    mul(yc, go).sum().backward();
    mul(yg, go.to(vk())).sum().backward();
    expect_close(xg.grad(), xc.grad(), 1e-4, 1e-5, what + " grad x");
    if (affine) {
      expect_close(wg.grad(), wc.grad(), 1e-4, 1e-5, what + " grad weight");
      expect_close(bg.grad(), bc.grad(), 1e-4, 1e-5, what + " grad bias");
    }
  }
}

}  // namespace
}  // namespace hearth
