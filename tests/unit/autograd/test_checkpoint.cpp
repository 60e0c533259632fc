// Activation checkpointing: the same outputs, input gradients, parameter
// gradients and later random draws as the block run normally (dropout
// included, under autocast too), while the block's intermediates are not
// kept between forward and backward.
#include <gtest/gtest.h>

#include "hearth/autograd/checkpoint.h"
#include "hearth/autograd/grad_mode.h"
#include "hearth/core/device_runtime.h"
#include "hearth/core/generator.h"
#include "hearth/nn/linear.h"
#include "hearth/ops/autocast.h"
#include "hearth/ops/elementwise.h"
#include "hearth/ops/factory.h"
#include "hearth/ops/linalg.h"
#include "hearth/ops/nn_functional.h"
#include "hearth/ops/reduction.h"

namespace hearth::autograd {
namespace {

double max_abs_diff(const Tensor& a, const Tensor& b) {
  return amax(abs(sub(a.to(DType::float64), b.to(DType::float64)))).item<double>();
}

struct Block {
  std::shared_ptr<nn::Linear> fc1 = std::make_shared<nn::Linear>(16, 64), fc2 = std::make_shared<nn::Linear>(64, 16);
  Tensor operator()(const Tensor& x) const { return fc2->forward(dropout(gelu(fc1->forward(x)), 0.3, true)); }
};

struct Result {
  Tensor out, grad_x, grad_w1, grad_w2;
  uint64_t offset_after = 0;
  Tensor next_draw;
};

Result run(bool checkpointed, bool bf16) {
  manual_seed(21);
  Block b;
  Tensor x = randn({8, 16}).requires_grad_();
  Tensor out;
  {
    std::optional<AutocastGuard> ac;
    if (bf16) ac.emplace(kCpu, DType::bfloat16);
    out = checkpointed
              ? checkpoint([&b](const std::vector<Tensor>& in) { return std::vector<Tensor>{b(in[0])}; }, {x})[0]
              : b(x);
  }
  sum(mul(out, out)).backward();
  Result r{out.detach(), x.grad(), b.fc1->weight.grad(), b.fc2->weight.grad(), default_generator().offset(), rand({4})};
  return r;
}

TEST(ActivationCheckpoint, SameValuesGradientsAndRandomDrawsAsTheBlockItself) {
  for (bool bf16 : {false, true}) {
    const Result plain = run(false, bf16), ckpt = run(true, bf16);
    EXPECT_EQ(max_abs_diff(ckpt.out, plain.out), 0.0) << "bf16 " << bf16;
    EXPECT_EQ(max_abs_diff(ckpt.grad_x, plain.grad_x), 0.0) << "bf16 " << bf16;
    EXPECT_EQ(max_abs_diff(ckpt.grad_w1, plain.grad_w1), 0.0);
    EXPECT_EQ(max_abs_diff(ckpt.grad_w2, plain.grad_w2), 0.0);
    EXPECT_EQ(ckpt.offset_after, plain.offset_after);
    EXPECT_EQ(max_abs_diff(ckpt.next_draw, plain.next_draw), 0.0);
  }
}

TEST(ActivationCheckpoint, KeepsOnlyTheInputsBetweenForwardAndBackward) {
  DeviceRuntime& rt = device_runtime(kCpu);
  auto held_after_forward = [&](bool checkpointed) {
    manual_seed(2);
    Tensor w = randn({512, 512}).requires_grad_();
    Tensor x = randn({256, 512}).requires_grad_();
    // Eight products through tanh: each keeps a [256, 512] activation when recorded.
    auto chain = [w](const std::vector<Tensor>& in) {
      Tensor h = in[0];
      for (int i = 0; i < 8; ++i) h = tanh(matmul(h, w));
      return std::vector<Tensor>{h};
    };
    const size_t before = rt.memory_stats(0).active;
    Tensor out = checkpointed ? checkpoint(chain, {x})[0] : chain({x})[0];
    const size_t held = rt.memory_stats(0).active - before;
    sum(out).backward();
    EXPECT_TRUE(x.grad().defined());
    EXPECT_TRUE(w.grad().defined());
    return held;
  };
  const size_t plain = held_after_forward(false), ckpt = held_after_forward(true);
  EXPECT_GT(plain, 0u);
  EXPECT_LT(ckpt * 4, plain) << "checkpointed " << ckpt << " bytes vs " << plain;
}

TEST(ActivationCheckpoint, WithoutGradModeItIsTheFunction) {
  NoGradGuard no_grad;
  Tensor x = randn({3}).requires_grad_();
  Tensor y = checkpoint([](const std::vector<Tensor>& in) { return std::vector<Tensor>{mul(in[0], 2.0)}; }, {x})[0];
  EXPECT_FALSE(y.requires_grad());
}

}  // namespace
}  // namespace hearth::autograd
