// batch_norm on Vulkan, training and eval, forward and backward, with the
// running statistics it updates, against the CPU.
#include <gtest/gtest.h>

#include "hearth/ops/elementwise.h"
#include "hearth/ops/factory.h"
#include "hearth/ops/nn_functional.h"
#include "tests/support/scoped_env.h"
#include "tests/unit/backends/vulkan/vulkan_test_util.h"

namespace hearth {
namespace {

using vulkan_test::expect_close;
using vulkan_test::vk;

TEST(VulkanBatchNorm, TrainingAndEvalMatchTheCpu) {
  HEARTH_SKIP_WITHOUT_VULKAN();
  for (bool training : {true, false}) {
    for (bool affine : {true, false}) {
      const std::string what = std::string(training ? "training" : "eval") + (affine ? " affine" : "");
      const Tensor x = add(mul(randn({6, 5, 7, 3}), 2.0f), 1.0f);
      Tensor rm = randn({5}), rv = add(rand({5}), 0.5f);
      Tensor rmg = rm.to(vk()), rvg = rv.to(vk());
      const Tensor w = randn({5}), b = randn({5});
      Tensor nbt = zeros({}, DType::int64), nbtg = nbt.to(vk());
      Tensor xc = x.clone().requires_grad_(), xg = x.to(vk()).requires_grad_();
      Tensor wc = w.clone().requires_grad_(), wg = w.to(vk()).requires_grad_();
      Tensor bc = b.clone().requires_grad_(), bg = b.to(vk()).requires_grad_();
      const Tensor yc =
          batch_norm(xc, rm, rv, affine ? wc : Tensor(), affine ? bc : Tensor(), training, 0.1, 1e-5, nbt);
      const Tensor yg =
          batch_norm(xg, rmg, rvg, affine ? wg : Tensor(), affine ? bg : Tensor(), training, 0.1, 1e-5, nbtg);
      expect_close(yg, yc, 1e-4, 1e-4, what);
      expect_close(rmg, rm, 1e-5, 1e-6, what + " running mean");
      expect_close(rvg, rv, 1e-5, 1e-6, what + " running var");
      expect_close(nbtg, nbt, 0, 0, what + " batches tracked");
      const Tensor go = randn(x.shape());
      mul(yc, go).sum().backward();
      mul(yg, go.to(vk())).sum().backward();
      expect_close(xg.grad(), xc.grad(), 1e-4, 1e-4, what + " grad x");
      if (affine) {
        expect_close(wg.grad(), wc.grad(), 1e-4, 1e-4, what + " grad weight");
        expect_close(bg.grad(), bc.grad(), 1e-4, 1e-4, what + " grad bias");
      }
    }
  }
}

}  // namespace
}  // namespace hearth

namespace hearth {
namespace {

using hearth::testing::ScopedEnv;
using vulkan_test::expect_close;
using vulkan_test::vk;

// The fused forward forms run on the CPU here (they are composed above the
// backends); their backward is batch_norm_backward on Vulkan, with the ReLU's
// mask (from the saved output or the affine map) and the residual's gradient.
TEST(VulkanBatchNorm, TheBackwardOfTheFusedFormsMatchesTheCpu) {
  HEARTH_SKIP_WITHOUT_VULKAN();
  ScopedEnv fallback("HEARTH_ENABLE_CPU_FALLBACK", "1");
  for (bool with_residual : {false, true}) {
    const std::string what = with_residual ? "batch_norm_add_relu" : "batch_norm_relu";
    const Tensor x = randn({4, 6, 5, 5}), r = randn({4, 6, 5, 5}), w = randn({6}), b = randn({6});
    Tensor rm = zeros({6}), rv = ones({6}), rmg = rm.to(vk()), rvg = rv.to(vk());
    Tensor xc = x.clone().requires_grad_(), xg = x.to(vk()).requires_grad_();
    Tensor rc = r.clone().requires_grad_(), rg = r.to(vk()).requires_grad_();
    Tensor wc = w.clone().requires_grad_(), wg = w.to(vk()).requires_grad_();
    Tensor bc = b.clone().requires_grad_(), bg = b.to(vk()).requires_grad_();
    const Tensor yc =
        with_residual ? batch_norm_add_relu(xc, rc, rm, rv, wc, bc, true) : batch_norm_relu(xc, rm, rv, wc, bc, true);
    const Tensor yg = with_residual ? batch_norm_add_relu(xg, rg, rmg, rvg, wg, bg, true)
                                    : batch_norm_relu(xg, rmg, rvg, wg, bg, true);
    expect_close(yg, yc, 1e-4, 1e-4, what);
    const Tensor go = randn(x.shape());
    mul(yc, go).sum().backward();
    mul(yg, go.to(vk())).sum().backward();
    expect_close(xg.grad(), xc.grad(), 1e-4, 1e-4, what + " grad x");
    expect_close(wg.grad(), wc.grad(), 1e-4, 1e-4, what + " grad weight");
    expect_close(bg.grad(), bc.grad(), 1e-4, 1e-4, what + " grad bias");
    if (with_residual) expect_close(rg.grad(), rc.grad(), 1e-5, 1e-6, what + " grad residual");
  }
}

}  // namespace
}  // namespace hearth
