// cross_entropy and nll_loss on Vulkan, forward and backward, with class
// weights, label smoothing and ignored rows, against the CPU.
#include <cmath>

#include <gtest/gtest.h>

#include "hearth/ops/elementwise.h"
#include "hearth/ops/factory.h"
#include "hearth/ops/nn_functional.h"
#include "tests/unit/backends/vulkan/vulkan_test_util.h"

namespace hearth {
namespace {

using vulkan_test::expect_close;
using vulkan_test::vk;

TEST(VulkanLoss, CrossEntropyMatchesTheCpu) {
  HEARTH_SKIP_WITHOUT_VULKAN();
  const int64_t M = 37, C = 11;
  const Tensor logits = mul(randn({M, C}), 3.0f);
  Tensor target = randint(0, C, {M});
  target.narrow(0, 4, 2).fill_(-100);  // ignored rows
  const Tensor weight = add(rand({C}), 0.5f);
  for (double ls : {0.0, 0.1}) {
    for (bool weighted : {false, true}) {
      for (const std::string red : {"mean", "sum", "none"}) {
        const std::string what = "cross_entropy ls=" + std::to_string(ls) + (weighted ? " weighted " : " ") + red;
        Tensor xc = logits.clone().requires_grad_();
        Tensor xg = logits.to(vk()).requires_grad_();
        const Tensor wc = weighted ? weight : Tensor();
        const Tensor wg = weighted ? weight.to(vk()) : Tensor();
        const Tensor lc = cross_entropy(xc, target, wc, -100, red, ls);
        const Tensor lg = cross_entropy(xg, target.to(vk()), wg, -100, red, ls);
        expect_close(lg, lc, 1e-5, 1e-5, what);
        const Tensor gc = red == "none" ? randn({M}) : ones({});
        mul(lc, gc).sum().backward();
        mul(lg, gc.to(vk())).sum().backward();
        expect_close(xg.grad(), xc.grad(), 1e-4, 1e-6, what + " backward");
      }
    }
  }
}

TEST(VulkanLoss, NllLossMatchesTheCpu) {
  HEARTH_SKIP_WITHOUT_VULKAN();
  const int64_t M = 29, C = 7;
  const Tensor lp = log_softmax(randn({M, C}), 1);
  Tensor target = randint(0, C, {M});
  target.narrow(0, 0, 1).fill_(3);
  target.narrow(0, 9, 1).fill_(-1);
  const Tensor weight = add(rand({C}), 0.5f);
  for (bool weighted : {false, true}) {
    Tensor xc = lp.clone().requires_grad_();
    Tensor xg = lp.to(vk()).requires_grad_();
    const Tensor lc = nll_loss(xc, target, weighted ? weight : Tensor(), -1);
    const Tensor lg = nll_loss(xg, target.to(vk()), weighted ? weight.to(vk()) : Tensor(), -1);
    expect_close(lg, lc, 1e-5, 1e-6, weighted ? "nll weighted" : "nll");
    lc.backward();
    lg.backward();
    expect_close(xg.grad(), xc.grad(), 1e-5, 1e-7, weighted ? "nll weighted backward" : "nll backward");
  }
}

TEST(VulkanLoss, AnOutOfRangeTargetGivesNaNInsteadOfRaising) {
  HEARTH_SKIP_WITHOUT_VULKAN();
  const Tensor logits = randn({4, 3}).to(vk());
  const Tensor target = tensor(std::vector<int64_t>{0, 1, 7, 2}, {4}).to(vk());
  const Tensor l = cross_entropy(logits, target, Tensor(), -100, "none");
  const std::vector<float> v = l.cpu().to_vector<float>();
  EXPECT_FALSE(std::isnan(v[0]));
  EXPECT_TRUE(std::isnan(v[2]));
}

}  // namespace
}  // namespace hearth
