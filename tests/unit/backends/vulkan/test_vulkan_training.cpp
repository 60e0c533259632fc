// End to end: a small MLP trained for a few steps on Vulkan and on the CPU
// from the same weights and batches (AdamW, cross-entropy, gradient
// clipping, as the trainer runs it) follows the same loss curve, with no
// op falling back to the CPU.
#include <gtest/gtest.h>

#include "hearth/autograd/grad_mode.h"
#include "hearth/core/generator.h"
#include "hearth/dispatch/dispatch.h"
#include "hearth/nn/activation.h"
#include "hearth/nn/container.h"
#include "hearth/nn/linear.h"
#include "hearth/ops/factory.h"
#include "hearth/ops/linalg.h"
#include "hearth/ops/nn_functional.h"
#include "hearth/ops/reduction.h"
#include "hearth/optim/adam.h"
#include "hearth/optim/clip_grad.h"
#include "tests/unit/backends/vulkan/vulkan_test_util.h"

namespace hearth {
namespace {

using vulkan_test::vk;

std::shared_ptr<nn::Sequential> small_mlp() {
  return std::make_shared<nn::Sequential>(std::make_shared<nn::Linear>(48, 32), std::make_shared<nn::ReLU>(),
                                          std::make_shared<nn::Linear>(32, 10));
}

std::vector<float> train(const std::shared_ptr<nn::Sequential>& model, Device device, const std::vector<Tensor>& xs,
                         const std::vector<Tensor>& ys) {
  model->to(device);
  optim::AdamWOptions o;
  o.lr = 1e-2;
  optim::AdamW opt(model->parameters(), o);
  std::vector<float> losses;
  for (size_t i = 0; i < xs.size(); ++i) {
    opt.zero_grad();
    const Tensor loss = cross_entropy(model->forward(xs[i].to(device)), ys[i].to(device));
    loss.backward();
    optim::clip_grad_norm_(model->parameters(), 1.0);
    opt.step();
    losses.push_back(loss.cpu().item<float>());
  }
  return losses;
}

TEST(VulkanTraining, AnMlpFollowsTheCpuLossCurve) {
  HEARTH_SKIP_WITHOUT_VULKAN();
  manual_seed(7);
  auto cpu_model = small_mlp();
  auto vk_model = small_mlp();
  {
    NoGradGuard no_grad;
    const auto from = cpu_model->parameters();
    const auto to = vk_model->parameters();
    for (size_t i = 0; i < from.size(); ++i) to[i].copy_(from[i]);
  }
  // Labels a fixed linear teacher gives, so there is something to learn.
  const Tensor teacher = randn({48, 10});
  std::vector<Tensor> xs, ys;
  for (int i = 0; i < 12; ++i) {
    xs.push_back(randn({16, 48}));
    ys.push_back(argmax(mm(xs.back(), teacher), 1));
  }
  const std::string before = fallback_report();
  const std::vector<float> cpu = train(cpu_model, Device(), xs, ys);
  const std::vector<float> gpu = train(vk_model, vk(), xs, ys);
  ASSERT_EQ(cpu.size(), gpu.size());
  for (size_t i = 0; i < cpu.size(); ++i) EXPECT_NEAR(gpu[i], cpu[i], 1e-4 * (1 + std::abs(cpu[i]))) << "step " << i;
  EXPECT_LT(cpu.back(), cpu.front()) << "the model learns";
  EXPECT_EQ(fallback_report(), before) << "an op ran on the CPU instead of Vulkan";
}

}  // namespace
}  // namespace hearth
