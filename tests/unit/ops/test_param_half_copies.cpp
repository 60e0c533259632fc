// The low-precision copies of parameters the optimizer writes for autocast
// (hearth/ops/param_half_copies.h): training with them matches training
// without them bit for bit, forwards after the first step cast no parameter,
// and anything that writes a parameter outside the optimizer makes autocast
// cast it again. Each test compares with the copies off (set_optimizer_half_copies_enabled(false)) in
// the same process.
#include <cstdint>
#include <limits>
#include <memory>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "hearth/autograd/grad_mode.h"
#include "hearth/core/generator.h"
#include "hearth/nn/activation.h"
#include "hearth/nn/container.h"
#include "hearth/nn/conv.h"
#include "hearth/nn/flatten.h"
#include "hearth/nn/linear.h"
#include "hearth/ops/autocast.h"
#include "hearth/ops/elementwise.h"
#include "hearth/ops/factory.h"
#include "hearth/ops/nn_functional.h"
#include "hearth/ops/param_half_copies.h"
#include "hearth/ops/reduction.h"
#include "hearth/optim/adam.h"
#include "hearth/optim/functional.h"
#include "hearth/optim/grad_scaler.h"
#include "hearth/optim/sgd.h"

namespace hearth {
namespace {

// Sets the switch for a scope and restores it.
class HalfCopies {
 public:
  explicit HalfCopies(bool on) : before_(optimizer_half_copies_enabled()) { set_optimizer_half_copies_enabled(on); }
  ~HalfCopies() { set_optimizer_half_copies_enabled(before_); }

 private:
  bool before_;
};

std::vector<uint16_t> bits(const Tensor& t) {
  // The 16-bit patterns, in logical order (equal values, not merely close).
  Tensor c = t.contiguous();
  std::vector<uint16_t> out(static_cast<size_t>(c.numel()));
  const auto* p = static_cast<const uint16_t*>(c.data_ptr());
  out.assign(p, p + c.numel());
  return out;
}

void expect_identical(const Tensor& a, const Tensor& b, const std::string& what) {
  SCOPED_TRACE(what);
  ASSERT_EQ(a.shape(), b.shape());
  ASSERT_EQ(a.dtype(), b.dtype());
  EXPECT_EQ(a.contiguous().to_vector<float>(), b.contiguous().to_vector<float>());
}

std::shared_ptr<nn::Sequential> small_cnn() {
  return std::make_shared<nn::Sequential>(std::make_shared<nn::Conv2d>(3, 8, 3, 1, 1), std::make_shared<nn::ReLU>(),
                                          std::make_shared<nn::Flatten>(), std::make_shared<nn::Linear>(8 * 6 * 6, 5));
}

enum class Opt { sgd_momentum, sgd_nesterov, adamw };

std::unique_ptr<optim::Optimizer> make_optimizer(Opt kind, const std::vector<Tensor>& params) {
  if (kind == Opt::adamw) {
    optim::AdamWOptions o;
    o.lr = 1e-2;
    return std::make_unique<optim::AdamW>(params, o);
  }
  optim::SGDOptions o;
  o.lr = 0.05;
  o.momentum = 0.9;
  o.weight_decay = 1e-3;
  o.nesterov = kind == Opt::sgd_nesterov;
  return std::make_unique<optim::SGD>(params, o);
}

struct Run {
  std::vector<float> losses;
  std::vector<Tensor> params;          // after the last step
  std::vector<uint64_t> forward_casts;  // parameter casts of each step's forward
};

// A few bf16-mixed steps of a small CNN. The input is bfloat16 already, so
// the only casts of the forward are the parameters'.
Run train(bool copies, Opt kind, bool channels_last, int steps = 4) {
  HalfCopies mode(copies);
  manual_seed(21);
  auto model = small_cnn();
  if (channels_last) model->to(MemoryFormat::channels_last);
  Tensor x = randn({4, 3, 6, 6}).to(DType::bfloat16);
  if (channels_last) x = x.contiguous(MemoryFormat::channels_last);
  Tensor y = tensor(std::vector<int64_t>{0, 3, 1, 4});
  auto opt = make_optimizer(kind, model->parameters());
  Run r;
  for (int s = 0; s < steps; ++s) {
    opt->zero_grad();
    Tensor loss;
    {
      AutocastGuard autocast(kCpu, DType::bfloat16);
      const uint64_t before = autocast_casts_made();
      Tensor logits = model->forward(x);
      r.forward_casts.push_back(autocast_casts_made() - before);
      loss = cross_entropy(logits, y);
    }
    loss.backward();
    opt->step();
    r.losses.push_back(loss.item<float>());
  }
  for (const Tensor& p : model->parameters()) r.params.push_back(p.detach().clone());
  return r;
}

void expect_same_training(Opt kind, bool channels_last) {
  const Run off = train(false, kind, channels_last);
  const Run on = train(true, kind, channels_last);
  EXPECT_EQ(on.losses, off.losses);
  ASSERT_EQ(on.params.size(), off.params.size());
  for (size_t i = 0; i < on.params.size(); ++i) expect_identical(on.params[i], off.params[i], "parameter " + std::to_string(i));
  // Each step's forward casts the four parameters without copies; with them
  // only the first does, and the optimizer writes the copies from then on.
  ASSERT_EQ(on.forward_casts.size(), off.forward_casts.size());
  EXPECT_EQ(off.forward_casts.front(), 4u);
  EXPECT_EQ(on.forward_casts.front(), off.forward_casts.front());
  for (size_t s = 1; s < on.forward_casts.size(); ++s) {
    EXPECT_EQ(off.forward_casts[s], 4u) << "step " << s;
    EXPECT_EQ(on.forward_casts[s], 0u) << "step " << s;
  }
}

TEST(ParamHalfCopies, SgdMomentumTrainsBitIdenticallyWithoutParameterCasts) {
  expect_same_training(Opt::sgd_momentum, false);
}

TEST(ParamHalfCopies, SgdNesterovTrainsBitIdenticallyWithoutParameterCasts) {
  expect_same_training(Opt::sgd_nesterov, false);
}

TEST(ParamHalfCopies, AdamWTrainsBitIdenticallyWithoutParameterCasts) { expect_same_training(Opt::adamw, false); }

TEST(ParamHalfCopies, ChannelsLastWeightsTrainBitIdentically) {
  expect_same_training(Opt::sgd_momentum, true);
  expect_same_training(Opt::adamw, true);
}

// One step of `model` on a fixed batch, then its forward's output and casts.
struct Probe {
  Tensor out;
  uint64_t casts = 0;
};

Probe forward(nn::Module& model, const Tensor& x) {
  AutocastGuard autocast(kCpu, DType::bfloat16);
  const uint64_t before = autocast_casts_made();
  Probe p;
  p.out = model.forward(x).detach();
  p.casts = autocast_casts_made() - before;
  return p;
}

void step(nn::Module& model, optim::Optimizer& opt, const Tensor& x) {
  opt.zero_grad();
  Tensor loss;
  {
    AutocastGuard autocast(kCpu, DType::bfloat16);
    loss = sum(model.forward(x));
  }
  loss.backward();
  opt.step();
}

// The same forward with copies off: what the output must be.
Tensor reference_forward(nn::Module& model, const Tensor& x) {
  HalfCopies off(false);
  return forward(model, x).out;
}

TEST(ParamHalfCopies, ChannelsLastWeightsKeepTheirLayoutInTheirCopy) {
  HalfCopies on(true);
  manual_seed(4);
  auto model = small_cnn();
  model->to(MemoryFormat::channels_last);
  Tensor x = randn({2, 3, 6, 6}).to(DType::bfloat16).contiguous(MemoryFormat::channels_last);
  auto opt = make_optimizer(Opt::sgd_momentum, model->parameters());
  step(*model, *opt, x);
  const Tensor w = model->parameters().front();
  ASSERT_TRUE(w.is_contiguous(MemoryFormat::channels_last));
  const Tensor copy = valid_param_half_copy(w, DType::bfloat16);
  ASSERT_TRUE(copy.defined());
  EXPECT_TRUE(copy.is_contiguous(MemoryFormat::channels_last));
  EXPECT_EQ(copy.strides(), cast(w.detach(), DType::bfloat16).strides());
  EXPECT_EQ(bits(copy), bits(cast(w.detach(), DType::bfloat16)));
}

// Without a graph (evaluation, a checkpointed block's first forward) the
// copies serve as they are: no cast, the same output as casting; after the
// next step the forward sees the new values.
TEST(ParamHalfCopies, NoGradForwardsUseTheCopies) {
  HalfCopies on(true);
  manual_seed(6);
  auto model = small_cnn();
  Tensor x = randn({2, 3, 6, 6}).to(DType::bfloat16);
  auto opt = make_optimizer(Opt::sgd_momentum, model->parameters());
  step(*model, *opt, x);
  for (int round = 0; round < 2; ++round) {
    SCOPED_TRACE(round);
    Probe p;
    {
      NoGradGuard no_grad;
      p = forward(*model, x);
    }
    EXPECT_EQ(p.casts, 0u);
    Tensor expected;
    {
      NoGradGuard no_grad;
      clear_autocast_cache();  // no-grad casts outlive their region: make the reference cast afresh
      expected = reference_forward(*model, x);
      clear_autocast_cache();
    }
    expect_identical(p.out, expected, "no-grad forward");
    step(*model, *opt, x);
  }
}

TEST(ParamHalfCopies, WritesOutsideTheOptimizerMakeAutocastCastAgain) {
  HalfCopies on(true);
  manual_seed(5);
  auto model = small_cnn();
  Tensor x = randn({2, 3, 6, 6}).to(DType::bfloat16);
  auto opt = make_optimizer(Opt::sgd_momentum, model->parameters());
  step(*model, *opt, x);
  step(*model, *opt, x);
  const Tensor w = model->parameters().front();
  ASSERT_TRUE(valid_param_half_copy(w, DType::bfloat16).defined());
  Probe p = forward(*model, x);
  EXPECT_EQ(p.casts, 0u);
  expect_identical(p.out, reference_forward(*model, x), "after two steps");

  // In place: the copy no longer matches; this weight alone is cast again.
  {
    NoGradGuard no_grad;
    add_(w, full(w.shape(), 0.25));
  }
  EXPECT_FALSE(valid_param_half_copy(w, DType::bfloat16).defined());
  p = forward(*model, x);
  EXPECT_EQ(p.casts, 1u);
  expect_identical(p.out, reference_forward(*model, x), "after an in-place write");

  // A loaded state dict (other values): every parameter is cast again.
  auto other = small_cnn();
  model->load_state_dict(other->state_dict());
  p = forward(*model, x);
  EXPECT_EQ(p.casts, 4u);
  expect_identical(p.out, reference_forward(*model, x), "after load_state_dict");

  // copy_ into a parameter.
  step(*model, *opt, x);
  EXPECT_EQ(forward(*model, x).casts, 0u);
  {
    NoGradGuard no_grad;
    copy_(w, zeros(w.shape()));
  }
  p = forward(*model, x);
  EXPECT_EQ(p.casts, 1u);
  expect_identical(p.out, reference_forward(*model, x), "after copy_");

  // The next step writes the copies again.
  step(*model, *opt, x);
  p = forward(*model, x);
  EXPECT_EQ(p.casts, 0u);
  expect_identical(p.out, reference_forward(*model, x), "after the next step");
}

TEST(ParamHalfCopies, ASkippedStepLeavesTheCopiesValid) {
  HalfCopies on(true);
  manual_seed(6);
  auto model = small_cnn();
  Tensor x = randn({2, 3, 6, 6}).to(DType::bfloat16);
  auto opt = make_optimizer(Opt::adamw, model->parameters());
  step(*model, *opt, x);
  optim::GradScaler scaler;
  opt->zero_grad();
  Tensor loss;
  {
    AutocastGuard autocast(kCpu, DType::bfloat16);
    loss = sum(model->forward(x));
  }
  scaler.scale(loss).backward();
  {
    NoGradGuard no_grad;
    const Tensor g = model->parameters().back().grad();
    fill_(g, std::numeric_limits<float>::infinity());
  }
  EXPECT_FALSE(scaler.step(*opt));
  scaler.update();
  const Probe p = forward(*model, x);
  EXPECT_EQ(p.casts, 0u);
  expect_identical(p.out, reference_forward(*model, x), "after a skipped step");
}

TEST(ParamHalfCopies, TheUpdateWritesFloat16CopiesToo) {
  HalfCopies on(true);
  manual_seed(7);
  std::vector<Tensor> params, grads, bufs;
  for (int64_t n : {5, 130, 1}) {
    Tensor p = randn({n});
    p.requires_grad_();
    params.push_back(p);
    grads.push_back(randn({n}));
    bufs.push_back(zeros({n}));
    want_param_half_copy(p, DType::float16);
  }
  SgdStepAttrs a;
  a.lr = 0.1;
  a.momentum = 0.9;
  a.init_buffer = true;
  {
    NoGradGuard no_grad;
    optim::sgd_step_foreach_(params, grads, bufs, a);
  }
  for (const Tensor& p : params) {
    const Tensor copy = valid_param_half_copy(p, DType::float16);
    ASSERT_TRUE(copy.defined());
    EXPECT_EQ(bits(copy), bits(cast(p.detach(), DType::float16)));
    EXPECT_FALSE(valid_param_half_copy(p, DType::bfloat16).defined()) << "one copy, in the dtype wanted";
  }
  // Adam's update, one parameter at a time.
  AdamStepAttrs aa;
  aa.lr = 0.01;
  {
    NoGradGuard no_grad;
    optim::adam_step_(params[1], grads[1], zeros({130}), zeros({130}), Tensor(), aa);
  }
  const Tensor copy = valid_param_half_copy(params[1], DType::float16);
  ASSERT_TRUE(copy.defined());
  EXPECT_EQ(bits(copy), bits(cast(params[1].detach(), DType::float16)));
}

TEST(ParamHalfCopies, NothingIsWantedOrWrittenWhenOff) {
  HalfCopies off(false);
  Tensor p = randn({8});
  p.requires_grad_();
  want_param_half_copy(p, DType::bfloat16);
  EXPECT_FALSE(param_half_copy_to_write(p).defined());
  {
    HalfCopies on(true);
    EXPECT_FALSE(param_half_copy_to_write(p).defined()) << "the want made while off was not recorded";
  }
}

TEST(ParamHalfCopies, ADeadModelsCopiesAreFreed) {
  HalfCopies on(true);
  clear_param_half_copies();
  {
    manual_seed(8);
    auto model = small_cnn();
    Tensor x = randn({2, 3, 6, 6}).to(DType::bfloat16);
    auto opt = make_optimizer(Opt::sgd_momentum, model->parameters());
    step(*model, *opt, x);
    EXPECT_EQ(param_half_copy_count(), 4u);
  }
  EXPECT_EQ(param_half_copy_count(), 0u);
}

}  // namespace
}  // namespace hearth
