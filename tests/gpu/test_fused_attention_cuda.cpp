// Fused attention on CUDA beyond parity with the CPU (parity_fused_attention.cpp):
// which calls scaled_dot_product_attention hands to cuDNN, agreement with the
// unfused path, dropout (deterministic for one generator state, at its rate,
// the same mask forward and backward, in replayed step graphs and in
// checkpoint recomputation), and BERT trained either way, eagerly or through
// a replayed step graph.
//
// cuDNN's backward accumulates grad_q across key tiles in an order that may
// change between runs, so gradients of equal runs are compared to a tight
// tolerance, outputs bit for bit. A different dropout mask moves them by far
// more than that tolerance.
#include <cmath>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "hearth/autograd/checkpoint.h"
#include "hearth/autograd/engine.h"
#include "hearth/autograd/grad_mode.h"
#include "hearth/autograd/node.h"
#include "hearth/core/generator.h"
#include "hearth/nn/models/bert.h"
#include "hearth/ops/attention.h"
#include "hearth/ops/autocast.h"
#include "hearth/ops/elementwise.h"
#include "hearth/ops/factory.h"
#include "hearth/ops/linalg.h"
#include "hearth/ops/reduction.h"
#include "hearth/ops/view.h"
#include "hearth/optim/adam.h"
#include "hearth/train/step_graph.h"
#include "tests/gpu/gpu_test_util.h"

namespace hearth::gpu_testing {
namespace {

std::string grad_fn_name(const Tensor& t) { return t.grad_fn() ? t.grad_fn()->name() : std::string("none"); }

// Restores the switch whatever a test set it to.
struct FusedSwitch {
  bool was = fused_attention_enabled();
  explicit FusedSwitch(bool on) { set_fused_attention_enabled(on); }
  ~FusedSwitch() { set_fused_attention_enabled(was); }
};

struct Attention {
  Tensor q, k, v, mask;
};

// BERT-base's attention at batch `b`: [b, 12, L, 64] bf16 with a padding mask
// [b, 1, 1, L] of float's lowest on the last 17 keys of every batch row.
Attention bert_attention(int64_t b, int64_t L = 128, DType dt = DType::bfloat16) {
  Attention a;
  a.q = randn({b, 12, L, 64}, dt, cuda0());
  a.k = randn({b, 12, L, 64}, dt, cuda0());
  a.v = randn({b, 12, L, 64}, dt, cuda0());
  a.mask = zeros({b, 1, 1, L}, DType::float32, cuda0());
  fill_(narrow(a.mask, 3, L - 17, 17), lowest_finite(DType::float32));
  return a;
}

TEST(FusedAttentionCuda, TakesBertsAttentionAndLeavesTheRest) {
  HEARTH_REQUIRE_CUDA();
  manual_seed(1);
  Attention a = bert_attention(4);
  a.q.requires_grad_();
  EXPECT_TRUE(attention_runs_fused(a.q, a.k, a.v, a.mask, 0.1, true))
      << "cuDNN refused BERT's attention; HEARTH_CUDNN_LOG=1 says which graph and why";
  EXPECT_TRUE(attention_runs_fused(a.q.detach(), a.k, a.v, a.mask)) << "inference";
  EXPECT_EQ(grad_fn_name(scaled_dot_product_attention(a.q, a.k, a.v, a.mask, 0.1, true)), "FusedAttentionBackward");
  {
    FusedSwitch off(false);
    EXPECT_FALSE(attention_runs_fused(a.q, a.k, a.v, a.mask));
  }
  EXPECT_FALSE(attention_runs_fused(cast(a.q, DType::float32), cast(a.k, DType::float32), cast(a.v, DType::float32)))
      << "float32 stays unfused";
  Tensor wide = randn({2, 2, 16, 136}, DType::bfloat16, cuda0());
  EXPECT_FALSE(attention_runs_fused(wide, wide, wide)) << "head dim above 128";
  EXPECT_FALSE(attention_runs_fused(a.q, a.k, a.v, zeros({4, 12, 128, 128}, DType::float32, cuda0())))
      << "a mask per head";
}

// scaled_dot_product_attention fused and unfused, without dropout: the same
// outputs and gradients up to the half type's rounding.
TEST(FusedAttentionCuda, AgreesWithTheUnfusedPath) {
  HEARTH_REQUIRE_CUDA();
  for (DType dt : {DType::bfloat16, DType::float16}) {
    SCOPED_TRACE(dtype_name(dt));
    manual_seed(2);
    const Attention a = bert_attention(3, 77, dt);
    const Tensor g = randn({3, 12, 77, 64}, dt, cuda0());
    std::vector<Tensor> results[2];
    for (bool fused : {false, true}) {
      FusedSwitch sw(fused);
      Tensor q = a.q.detach().requires_grad_(), k = a.k.detach().requires_grad_(), v = a.v.detach().requires_grad_();
      Tensor out = scaled_dot_product_attention(q, k, v, a.mask);
      EXPECT_EQ(grad_fn_name(out) == "FusedAttentionBackward", fused);
      autograd::run_backward({out}, {g}, false);
      results[fused] = {out, q.grad(), k.grad(), v.grad()};
    }
    const double tol = dt == DType::bfloat16 ? 2e-2 : 4e-3;
    for (size_t i = 0; i < 4; ++i) EXPECT_LT(relative_error(results[1][i], results[0][i]), tol) << "tensor " << i;
  }
}

// With v the identity the output is the dropped, scaled weights themselves:
// their zeros are the drops (a softmax weight is never zero), and the
// gradient of v must be their transpose times the output gradient, which
// holds only if the backward drops what the forward dropped.
TEST(FusedAttentionCuda, DropoutIsDeterministicAtItsRateAndTheSameBothWays) {
  HEARTH_REQUIRE_CUDA();
  const int64_t B = 2, H = 4, L = 64, S = 64;
  const double p = 0.3;
  manual_seed(3);
  const Tensor q = randn({B, H, L, 64}, DType::bfloat16, cuda0()), k = randn({B, H, S, 64}, DType::bfloat16, cuda0());
  const Tensor v = expand(eye(S, -1, DType::bfloat16, cuda0()), {B, H, S, S}).contiguous();
  const Tensor g = randn({B, H, L, S}, DType::bfloat16, cuda0());
  auto run = [&](uint64_t seed) {
    manual_seed(seed);
    Tensor vv = v.detach().requires_grad_();
    Tensor out = fused_attention(q, k, vv, Tensor(), p, true);
    autograd::run_backward({out}, {g}, false);
    return std::vector<Tensor>{out, vv.grad()};
  };
  const std::vector<Tensor> a = run(5), b = run(5), c = run(6);
  EXPECT_EQ(max_abs_diff(a[0], b[0]), 0.0) << "one generator state, one output";
  EXPECT_LT(relative_error(a[1], b[1]), 1e-3);
  EXPECT_GT(relative_error(c[0], a[0]), 0.3) << "another state drops other elements";
  const double dropped = mean(cast(eq(a[0], 0.0), DType::float32)).item<double>();
  EXPECT_NEAR(dropped, p, 0.02) << "the share of weights dropped";
  const double row_sum = mean(sum(cast(a[0], DType::float32), {-1})).item<double>();
  EXPECT_NEAR(row_sum, 1.0, 0.03) << "kept weights are scaled by 1 / (1 - p)";
  const Tensor want = matmul(transpose(cast(a[0], DType::float32), -2, -1), cast(g, DType::float32));
  EXPECT_LT(relative_error(a[1], want), 2e-2) << "the backward dropped what the forward dropped";
}

// A recorded step graph replays the dropout masks the eager steps draw.
TEST(FusedAttentionCuda, ReplayedStepsDrawWhatEagerStepsDraw) {
  HEARTH_REQUIRE_CUDA();
  auto run = [](bool graphs) {
    manual_seed(31);
    const Attention a = bert_attention(2, 96);
    const Tensor g = randn({2, 12, 96, 64}, DType::bfloat16, cuda0());
    const Tensor out = zeros({2, 12, 96, 64}, DType::bfloat16, cuda0());
    const Tensor grad_q = zeros_like(out), grad_v = zeros_like(out);
    auto step = [&] {
      Tensor q = a.q.detach().requires_grad_(), v = a.v.detach().requires_grad_();
      Tensor o = scaled_dot_product_attention(q, a.k, v, a.mask, 0.2, true);
      autograd::run_backward({o}, {g}, false);
      NoGradGuard no_grad;
      copy_(out, o);
      copy_(grad_q, q.grad());
      copy_(grad_v, v.grad());
    };
    train::GraphedStep graphed(cuda0(), step);
    std::vector<std::vector<Tensor>> steps;
    for (int i = 0; i < 6; ++i) {
      graphs ? graphed() : step();
      steps.push_back({out.to(Device()), grad_q.to(Device()), grad_v.to(Device())});
    }
    EXPECT_EQ(graphs, graphed.replaying()) << graphed.fallback_reason();
    return steps;
  };
  const auto eager = run(false), graphed = run(true);
  ASSERT_EQ(graphed.size(), eager.size());
  for (size_t i = 0; i < eager.size(); ++i) {
    EXPECT_EQ(max_abs_diff(graphed[i][0], eager[i][0]), 0.0) << "step " << i;
    EXPECT_LT(relative_error(graphed[i][1], eager[i][1]), 1e-3) << "step " << i;
    EXPECT_LT(relative_error(graphed[i][2], eager[i][2]), 1e-3) << "step " << i;
  }
  EXPECT_GT(relative_error(eager[5][0], eager[4][0]), 0.1) << "each step draws a new mask";
}

// A small BERT under bf16 autocast: loss and parameter gradients. The key
// projections' biases are left out: a bias shared by every score of a row
// leaves its softmax unchanged, so their gradient is zero but for rounding,
// and two paths' rounding differs by more than itself.
struct BertRun {
  double loss = 0;
  std::vector<Tensor> grads;  // on the CPU, undefined where a parameter got none
  std::vector<std::string> names;
};

BertRun bert_step(bool fused, bool checkpointing, double dropout) {
  using nn::models::BertConfig;
  using nn::models::BertForSequenceClassification;
  FusedSwitch sw(fused);
  manual_seed(17);
  BertConfig c;
  c.vocab_size = 500;
  c.hidden_size = 128;
  c.num_attention_heads = 2;  // head dim 64
  c.num_hidden_layers = 2;
  c.intermediate_size = 256;
  c.max_position_embeddings = 128;
  c.hidden_dropout_prob = dropout;
  c.attention_probs_dropout_prob = dropout;
  c.set_num_labels(3);
  auto model = std::make_shared<BertForSequenceClassification>(c);
  model->to(cuda0());
  if (checkpointing) {
    EXPECT_TRUE(model->gradient_checkpointing_enable());
  }
  const Tensor ids = randint(0, 500, {4, 64}, DType::int64, cuda0());
  const Tensor types = zeros({4, 64}, DType::int64, cuda0());
  Tensor attention_mask = ones({4, 64}, DType::int64, cuda0());
  fill_(narrow(narrow(attention_mask, 0, 1, 3), 1, 50, 14), 0);  // padding on three of the rows
  const Tensor labels = randint(0, 3, {4}, DType::int64, cuda0());
  manual_seed(23);  // the dropout masks
  Tensor loss;
  {
    AutocastGuard autocast(cuda0().kind, DType::bfloat16);
    loss = model->forward(ids, types, attention_mask, labels).loss;
  }
  loss.backward();
  BertRun r;
  r.loss = loss.item<double>();
  for (const auto& [name, p] : model->named_parameters()) {
    if (name.find("attention.self.key.bias") != std::string::npos) continue;
    r.names.push_back(name);
    r.grads.push_back(p.grad().defined() ? p.grad().to(Device()) : Tensor());
  }
  return r;
}

// BERT's training step recorded as a step graph and replayed: the losses and
// weights of the same steps run eagerly, attention's dropout included.
struct BertTraining {
  std::vector<float> losses;
  std::vector<Tensor> weights;  // on the CPU, after the last step
};

BertTraining train_bert(bool graphs) {
  using nn::models::BertConfig;
  using nn::models::BertForSequenceClassification;
  manual_seed(41);
  BertConfig c;
  c.vocab_size = 500;
  c.hidden_size = 128;
  c.num_attention_heads = 2;
  c.num_hidden_layers = 2;
  c.intermediate_size = 256;
  c.max_position_embeddings = 128;
  c.set_num_labels(3);
  auto model = std::make_shared<BertForSequenceClassification>(c);
  model->to(cuda0());
  optim::AdamW opt(model->parameters(), optim::AdamWOptions{.lr = 1e-3});
  const Tensor ids = randint(0, 500, {8, 64}, DType::int64, cuda0());
  const Tensor types = zeros({8, 64}, DType::int64, cuda0());
  Tensor attention_mask = ones({8, 64}, DType::int64, cuda0());
  fill_(narrow(narrow(attention_mask, 0, 4, 4), 1, 40, 24), 0);
  const Tensor labels = randint(0, 3, {8}, DType::int64, cuda0());
  const Tensor loss_out = zeros({}, DType::float32, cuda0());
  auto forward_backward = [&] {
    opt.zero_grad(/*set_to_none=*/false);
    Tensor loss;
    {
      AutocastGuard autocast(cuda0().kind, DType::bfloat16);
      loss = model->forward(ids, types, attention_mask, labels).loss;
    }
    loss.backward();
    NoGradGuard no_grad;
    copy_(loss_out, loss);
  };
  train::GraphedStep graphed(cuda0(), forward_backward);
  BertTraining r;
  for (int i = 0; i < 8; ++i) {
    graphs ? graphed() : forward_backward();
    opt.step();
    r.losses.push_back(loss_out.item<float>());
  }
  EXPECT_EQ(graphs, graphed.replaying()) << graphed.fallback_reason();
  for (const Tensor& p : model->parameters()) r.weights.push_back(p.to(Device()));
  return r;
}

TEST(FusedAttentionCuda, BertStepsReplayedEqualEagerSteps) {
  HEARTH_REQUIRE_CUDA();
  const BertTraining eager = train_bert(false), graphed = train_bert(true);
  ASSERT_EQ(graphed.losses.size(), eager.losses.size());
  for (size_t i = 0; i < eager.losses.size(); ++i)
    EXPECT_NEAR(graphed.losses[i], eager.losses[i], 1e-3 * std::abs(eager.losses[i])) << "step " << i;
  ASSERT_EQ(graphed.weights.size(), eager.weights.size());
  for (size_t i = 0; i < eager.weights.size(); ++i)
    EXPECT_LT(relative_error(graphed.weights[i], eager.weights[i]), 1e-3) << "tensor " << i;
}

TEST(FusedAttentionCuda, BertTrainsTheSameFusedOrNot) {
  HEARTH_REQUIRE_CUDA();
  const BertRun unfused = bert_step(false, false, 0.0), fused = bert_step(true, false, 0.0);
  EXPECT_NEAR(fused.loss, unfused.loss, 2e-2 * std::abs(unfused.loss));
  ASSERT_EQ(fused.grads.size(), unfused.grads.size());
  for (size_t i = 0; i < fused.grads.size(); ++i) {
    ASSERT_EQ(fused.grads[i].defined(), unfused.grads[i].defined()) << fused.names[i];
    if (fused.grads[i].defined()) {
      EXPECT_LT(relative_error(fused.grads[i], unfused.grads[i]), 5e-2) << fused.names[i];
    }
  }
}

// Gradient checkpointing recomputes each layer in the backward: its dropout
// masks, attention's included, must be the ones the forward drew.
TEST(FusedAttentionCuda, CheckpointRecomputationDrawsTheSameMasks) {
  HEARTH_REQUIRE_CUDA();
  const BertRun kept = bert_step(true, false, 0.1), recomputed = bert_step(true, true, 0.1);
  EXPECT_NEAR(recomputed.loss, kept.loss, 1e-3 * std::abs(kept.loss));
  ASSERT_EQ(recomputed.grads.size(), kept.grads.size());
  for (size_t i = 0; i < kept.grads.size(); ++i) {
    ASSERT_EQ(recomputed.grads[i].defined(), kept.grads[i].defined()) << kept.names[i];
    if (kept.grads[i].defined()) {
      EXPECT_LT(relative_error(recomputed.grads[i], kept.grads[i]), 2e-2) << kept.names[i];
    }
  }
}

}  // namespace
}  // namespace hearth::gpu_testing
