// Optimizer updates of channels_last parameters: state in the parameter's
// layout, and the same numbers as the same parameters in NCHW.
#include <gtest/gtest.h>

#include "hearth/autograd/grad_mode.h"
#include "hearth/core/generator.h"
#include "hearth/ops/elementwise.h"
#include "hearth/ops/factory.h"
#include "hearth/ops/view.h"
#include "hearth/optim/adam.h"
#include "hearth/optim/sgd.h"

namespace hearth {
namespace {

// Three steps on a [6, 5, 3, 3] weight with fixed gradients, once NCHW and
// once channels_last; returns the final weight (NCHW) and the optimizer's
// first state tensor.
template <typename Make>
std::pair<Tensor, Tensor> three_steps(bool channels_last, Make make, const char* state_name) {
  manual_seed(21);
  Tensor w = randn({6, 5, 3, 3});
  std::vector<Tensor> grads{randn({6, 5, 3, 3}), randn({6, 5, 3, 3}), randn({6, 5, 3, 3})};
  if (channels_last) {
    w = contiguous(w, MemoryFormat::channels_last);
    for (Tensor& g : grads) g = contiguous(g, MemoryFormat::channels_last);
  }
  w.requires_grad_();
  auto opt = make(std::vector<Tensor>{w});
  for (const Tensor& g : grads) {
    w.set_grad(g.clone());  // clone keeps the layout
    opt->step();
  }
  const optim::ParamState* st = opt->state(w);
  return {contiguous(w.detach()), st ? st->tensors.at(state_name) : Tensor()};
}

void expect_same_updates(const std::pair<Tensor, Tensor>& nchw, const std::pair<Tensor, Tensor>& nhwc) {
  EXPECT_EQ(nhwc.first.to_vector<float>(), nchw.first.to_vector<float>());
  ASSERT_TRUE(nhwc.second.defined());
  EXPECT_TRUE(nhwc.second.is_contiguous(MemoryFormat::channels_last));
  EXPECT_EQ(contiguous(nhwc.second).to_vector<float>(), nchw.second.to_vector<float>());
}

TEST(OptimChannelsLast, SgdMomentumKeepsItsBufferInTheParametersLayout) {
  auto make = [](std::vector<Tensor> p) {
    return std::make_unique<optim::SGD>(p, optim::SGDOptions{.lr = 0.1, .momentum = 0.9, .weight_decay = 1e-2});
  };
  expect_same_updates(three_steps(false, make, "momentum_buffer"), three_steps(true, make, "momentum_buffer"));
}

TEST(OptimChannelsLast, AdamKeepsItsMomentsInTheParametersLayout) {
  auto make = [](std::vector<Tensor> p) { return std::make_unique<optim::Adam>(p, optim::AdamOptions{.lr = 0.01}); };
  expect_same_updates(three_steps(false, make, "exp_avg"), three_steps(true, make, "exp_avg"));
}

TEST(OptimChannelsLast, AGradientInAnotherLayoutStillUpdatesRight) {
  // An NCHW gradient for a channels_last weight: copied for the kernel, as before.
  manual_seed(22);
  Tensor w = contiguous(randn({4, 3, 2, 2}), MemoryFormat::channels_last).requires_grad_();
  const Tensor w0 = contiguous(w.detach());
  const Tensor g = randn({4, 3, 2, 2});
  w.set_grad(g.clone());
  optim::SGD opt({w}, optim::SGDOptions{.lr = 0.5});
  opt.step();
  EXPECT_TRUE(w.is_contiguous(MemoryFormat::channels_last));
  Tensor want = sub(w0, mul(g, 0.5));
  EXPECT_EQ(contiguous(w.detach()).to_vector<float>(), want.to_vector<float>());
}

}  // namespace
}  // namespace hearth
