// sgd_step and adam_step on Vulkan (single, and foreach as their composition) against the CPU,
// through the optimizers' functional forms, over a few steps.
#include <gtest/gtest.h>

#include "hearth/dispatch/schemas/optim.h"
#include "hearth/ops/factory.h"
#include "hearth/optim/functional.h"
#include "tests/unit/backends/vulkan/vulkan_test_util.h"

namespace hearth {
namespace {

using vulkan_test::expect_close;
using vulkan_test::vk;

TEST(VulkanOptim, SgdStepsMatchTheCpu) {
  HEARTH_SKIP_WITHOUT_VULKAN();
  for (double momentum : {0.0, 0.9}) {
    for (bool nesterov : {false, true}) {
      if (nesterov && momentum == 0.0) continue;
      Tensor p = randn({50, 3}), pv = p.to(vk());
      Tensor buf = zeros({50, 3}), bufv = zeros({50, 3}, DType::float32, vk());
      for (int step = 0; step < 3; ++step) {
        const Tensor g = randn({50, 3});
        SgdStepAttrs a;
        a.lr = 0.05;
        a.momentum = momentum;
        a.dampening = nesterov ? 0.0 : 0.1;
        a.weight_decay = 0.01;
        a.nesterov = nesterov;
        a.init_buffer = step == 0;
        optim::sgd_step_(p, g, momentum != 0 ? buf : Tensor(), a);
        optim::sgd_step_foreach_({pv}, {g.to(vk())}, momentum != 0 ? std::vector<Tensor>{bufv} : std::vector<Tensor>{},
                                 a);
      }
      expect_close(pv, p, 1e-5, 1e-6, "sgd momentum=" + std::to_string(momentum));
      if (momentum != 0) expect_close(bufv, buf, 1e-5, 1e-6, "sgd buffer");
    }
  }
}

TEST(VulkanOptim, AdamStepsMatchTheCpu) {
  HEARTH_SKIP_WITHOUT_VULKAN();
  for (bool decoupled : {false, true}) {
    for (bool amsgrad : {false, true}) {
      Tensor p = randn({40}), pv = p.to(vk());
      Tensor m = zeros({40}), v = zeros({40}), vm = zeros({40});
      Tensor mv = m.to(vk()), vv = v.to(vk()), vmv = vm.to(vk());
      for (int step = 1; step <= 4; ++step) {
        const Tensor g = randn({40});
        AdamStepAttrs a;
        a.lr = 0.01;
        a.weight_decay = 0.1;
        a.decoupled_weight_decay = decoupled;
        a.amsgrad = amsgrad;
        a.step = step;
        optim::adam_step_(p, g, m, v, amsgrad ? vm : Tensor(), a);
        if (step % 2)
          optim::adam_step_(pv, g.to(vk()), mv, vv, amsgrad ? vmv : Tensor(), a);
        else
          optim::adam_step_foreach_({pv}, {g.to(vk())}, {mv}, {vv},
                                    amsgrad ? std::vector<Tensor>{vmv} : std::vector<Tensor>{}, a);
      }
      const std::string what = std::string("adam") + (decoupled ? "w" : "") + (amsgrad ? " amsgrad" : "");
      expect_close(pv, p, 1e-5, 1e-6, what);
      expect_close(mv, m, 1e-5, 1e-6, what + " exp_avg");
      expect_close(vv, v, 1e-5, 1e-7, what + " exp_avg_sq");
    }
  }
}

}  // namespace
}  // namespace hearth
