// SGD against torch.optim.SGD (numbers from tests/fixtures/optim_reference.py).
#include <cstdlib>

#include <gtest/gtest.h>

#include "hearth/autograd/grad_mode.h"
#include "hearth/ops/elementwise.h"
#include "hearth/ops/factory.h"
#include "hearth/ops/view.h"
#include "hearth/optim/functional.h"
#include "hearth/optim/sgd.h"
#include "tests/support/test_device.h"
#include "tests/unit/optim/optim_testing.h"

namespace hearth {
namespace {

using optim::SGD;
using optim::SGDOptions;
using testing::check_three_steps;

auto make_sgd(SGDOptions o) {
  return [o](std::vector<Tensor> p) { return std::make_unique<SGD>(p, o); };
}

TEST(OptimSgd, PlainMatchesPyTorch) {
  // p -= lr * g.
  check_three_steps(make_sgd({.lr = 0.1}), {{
                                               {{{0.49, -0.98, 1.47, 1.96}, {0.0, 0.0, 0.25}}},
                                               {{{0.54, -1.005, 1.465, 1.97}, {-0.03, 0.0, 0.32}}},
                                               {{{0.52, -1.025, 1.495, 1.91}, {0.09, -0.04, 0.23}}},
                                           }});
}

TEST(OptimSgd, MomentumDampeningWeightDecayMatchesPyTorch) {
  check_three_steps(
      make_sgd({.lr = 0.1, .momentum = 0.9, .dampening = 0.1, .weight_decay = 0.01}),
      {{
          {{{0.4895, -0.979, 1.4685, 1.958}, {-9.999999999998899e-05, 0.00019999999999997797, 0.24969999999999998}}},
          {{{0.52460945, -0.9817189, 1.43432835, 1.9274377999999999}, {-0.11718991, 0.18037981999999997, 0.26720527}}},
          {{{0.5377358064950001, -1.0012823629899998, 1.429282969485, 1.8441971259799999},
            {-0.11446535808099999, 0.306379316162, 0.20171952825699999}}},
      }});
}

TEST(OptimSgd, NesterovMatchesPyTorch) {
  check_three_steps(
      make_sgd({.lr = 0.05, .momentum = 0.8, .weight_decay = 0.1, .nesterov = true}),
      {{
          {{{0.4865, -0.973, 1.4595, 1.946}, {0.009099999999999997, -0.018199999999999994, 0.25229999999999997}}},
          {{{0.5223215, -0.977143, 1.4274645, 1.918286}, {-0.05030190000000001, 0.04660380000000001, 0.2960693}}},
          {{{0.5102238065, -0.983555113, 1.4238269195, 1.828634226},
            {0.022665697099999986, 0.06195460580000001, 0.22042931629999996}}},
      }});
}

TEST(OptimSgd, MaximizeMatchesPyTorch) {
  // The gradient is negated before weight decay: at step 1, d = -g + 0.2 p.
  check_three_steps(make_sgd({.lr = 0.1, .momentum = 0.5, .weight_decay = 0.2, .maximize = true}),
                    {{
                        {{{0.5, -1.0, 1.5, 2.0}, {0.198, -0.396, 0.344}}},
                        {{{0.44, -0.955, 1.475, 1.95}, {0.27304, -0.48608, 0.28912}}},
                        {{{0.4212, -0.8934, 1.403, 1.946}, {0.1850992, -0.4813984, 0.34589759999999997}}},
                    }});
}

TEST(OptimSgd, Float32AndHalfParametersFollowTheSameFormula) {
  check_three_steps(
      make_sgd({.lr = 0.1, .momentum = 0.9, .dampening = 0.1, .weight_decay = 0.01}),
      {{
          {{{0.4895, -0.979, 1.4685, 1.958}, {-1e-4, 2e-4, 0.2497}}},
          {{{0.52460945, -0.9817189, 1.43432835, 1.9274378}, {-0.11718991, 0.18037982, 0.26720527}}},
          {{{0.537735806, -1.001282363, 1.429282969, 1.844197126}, {-0.114465358, 0.306379316, 0.201719528}}},
      }},
      1e-6, DType::float32);
  check_three_steps(make_sgd({.lr = 0.1}),
                    {{
                        {{{0.49, -0.98, 1.47, 1.96}, {0.0, 0.0, 0.25}}},
                        {{{0.54, -1.005, 1.465, 1.97}, {-0.03, 0.0, 0.32}}},
                        {{{0.52, -1.025, 1.495, 1.91}, {0.09, -0.04, 0.23}}},
                    }},
                    2e-2, DType::bfloat16);
}

TEST(OptimSgd, KeepsTheMomentumBufferAsState) {
  Tensor p = ones({3}, DType::float64);
  p.requires_grad_(true);
  SGD opt({p}, {.lr = 0.1, .momentum = 0.9});
  EXPECT_EQ(opt.state(p), nullptr);
  p.set_grad(full({3}, 2.0, DType::float64));
  opt.step();
  const optim::ParamState* st = opt.state(p);
  ASSERT_NE(st, nullptr);
  ASSERT_EQ(st->tensors.count("momentum_buffer"), 1u);
  // The first buffer is the gradient itself.
  testing::expect_values(st->tensors.at("momentum_buffer"), {2, 2, 2}, 0, "buffer");
  p.set_grad(full({3}, 1.0, DType::float64));
  opt.step();
  testing::expect_values(st->tensors.at("momentum_buffer"), {2.8, 2.8, 2.8}, 1e-15, "buffer");
  // Without momentum there is no state at all.
  Tensor q = ones({2});
  q.requires_grad_(true);
  SGD plain({q}, {.lr = 0.1});
  q.set_grad(ones({2}));
  plain.step();
  EXPECT_EQ(plain.state(q), nullptr);
}

TEST(OptimSgd, SkipsParametersWithoutGradients) {
  std::vector<Tensor> params = testing::reference_params();
  SGD opt(params, {.lr = 0.1});
  params[0].set_grad(ones({2, 2}, DType::float64));
  opt.step();
  testing::expect_values(params[0], {0.4, -1.1, 1.4, 1.9}, 1e-15, "p0");
  testing::expect_values(params[1], {0.1, -0.2, 0.3}, 0, "p1 (no grad)");
}

TEST(OptimSgd, UpdatesNonContiguousParametersInPlace) {
  Tensor base = tensor(std::vector<double>{1, 2, 3, 4, 5, 6}, {2, 3});
  Tensor p = transpose(base, 0, 1);  // [3, 2] view, not contiguous
  ASSERT_FALSE(p.is_contiguous());
  p.requires_grad_(true);
  SGD opt({p}, {.lr = 0.5, .momentum = 0.5});
  p.set_grad(transpose(ones({2, 3}, DType::float64), 0, 1));
  const uint32_t version = p.version();
  opt.step();
  EXPECT_GT(p.version(), version);
  testing::expect_values(base, {0.5, 1.5, 2.5, 3.5, 4.5, 5.5}, 0, "base storage");
}

TEST(OptimSgd, RejectsBadHyperparameters) {
  std::vector<Tensor> params = testing::reference_params();
  EXPECT_THROW(SGD(params, {.lr = -0.1}), ValueError);
  EXPECT_THROW(SGD(params, {.lr = 0.1, .momentum = -1}), ValueError);
  EXPECT_THROW(SGD(params, {.lr = 0.1, .weight_decay = -1}), ValueError);
  try {
    SGD(params, {.lr = 0.1, .nesterov = true});
    FAIL() << "expected ValueError";
  } catch (const ValueError& e) {
    EXPECT_NE(std::string(e.what()).find("Nesterov"), std::string::npos) << e.what();
  }
  EXPECT_THROW(SGD(params, {.lr = 0.1, .momentum = 0.9, .dampening = 0.5, .nesterov = true}), ValueError);
}

TEST(OptimSgd, FunctionalStepChecksItsArguments) {
  NoGradGuard no_grad;
  Tensor p = zeros({3}), g = zeros({3});
  EXPECT_THROW(optim::sgd_step_(p, zeros({4}), Tensor(), {}), ShapeError);
  EXPECT_THROW(optim::sgd_step_(p, zeros({3}, DType::float64), Tensor(), {}), TypeError);
  EXPECT_THROW(optim::sgd_step_(zeros({3}, DType::int64), g, Tensor(), {}), TypeError);
  SgdStepAttrs with_momentum;
  with_momentum.momentum = 0.9;
  EXPECT_THROW(optim::sgd_step_(p, g, Tensor(), with_momentum), ValueError);  // buffer missing
  EXPECT_THROW(optim::sgd_step_(p, g, zeros({3}), {}), ValueError);           // buffer without momentum
  // Empty parameters are fine.
  optim::sgd_step_(zeros({0}), zeros({0}), Tensor(), {});
}

TEST(OptimSgd, StepOutsideNoGradIsStillAllowed) {
  // Optimizer::step turns recording off itself.
  Tensor p = ones({2});
  p.requires_grad_(true);
  SGD opt({p}, {.lr = 1.0});
  p.set_grad(ones({2}));
  opt.step();
  testing::expect_values(p, {0, 0}, 0, "p");
  EXPECT_TRUE(p.requires_grad());
  EXPECT_TRUE(p.is_leaf());
}

TEST(OptimSgd, DeviceWithoutTheKernelFallsBackAndWritesStateBack) {
  // The test device without its sgd_step kernel: with the fallback on, the CPU
  // kernel runs and the mutated parameter and momentum buffer come back.
  testing::ScopedOpRemoval lacks({OpId::sgd_step});
  const char* old = std::getenv("HEARTH_ENABLE_CPU_FALLBACK");
  setenv("HEARTH_ENABLE_CPU_FALLBACK", "1", 1);
  const Device dev = testing::test_device();
  Tensor p = tensor(std::vector<float>{1, 2, 3}).to(dev);
  p.requires_grad_(true);
  SGD opt({p}, {.lr = 0.5, .momentum = 0.5});
  for (int i = 0; i < 2; ++i) {
    p.set_grad(tensor(std::vector<float>{1, 1, 1}).to(dev));
    opt.step();
  }
  if (old)
    setenv("HEARTH_ENABLE_CPU_FALLBACK", old, 1);
  else
    unsetenv("HEARTH_ENABLE_CPU_FALLBACK");
  EXPECT_EQ(p.device(), dev);
  // buf: 1, then 1.5; p: 1 - 0.5 - 0.75.
  testing::expect_values(p.cpu(), {-0.25, 0.75, 1.75}, 1e-6, "p");
  testing::expect_values(opt.state(p)->tensors.at("momentum_buffer").cpu(), {1.5, 1.5, 1.5}, 1e-6, "buffer");
}

}  // namespace
}  // namespace hearth
