// Mixed precision on CUDA: autocast runs the products through the bf16/f16
// kernels (cuBLASLt, cuDNN) with results close to the CPU's, gradients reach
// float32 weights, the loss scaler skips an overflowing step with one host
// read, and the Trainer trains in bf16-mixed and fp16-mixed close to fp32.
// The optimizer's update writes the weights' bf16/fp16 copies autocast then
// uses instead of casting (hearth/ops/param_half_copies.h): training is bit
// for bit the same as with the copies off (set_optimizer_half_copies_enabled(false)).
#include <cmath>
#include <limits>
#include <string>
#include <utility>
#include <vector>

#include <gtest/gtest.h>

#include "hearth/autograd/grad_mode.h"
#include "hearth/core/generator.h"
#include "hearth/ops/autocast.h"
#include "hearth/ops/elementwise.h"
#include "hearth/ops/factory.h"
#include "hearth/ops/linalg.h"
#include "hearth/nn/nn.h"
#include "hearth/ops/nn_functional.h"
#include "hearth/ops/param_half_copies.h"
#include "hearth/ops/reduction.h"
#include "hearth/ops/view.h"
#include "hearth/optim/adam.h"
#include "hearth/optim/functional.h"
#include "hearth/optim/grad_scaler.h"
#include "hearth/optim/sgd.h"
#include "hearth/train/trainer.h"
#include "tests/gpu/gpu_test_util.h"
#include "tests/support/temp_dir.h"
#include "tests/unit/train/train_testing.h"

namespace hearth::gpu_testing {
namespace {

// conv -> relu -> flatten -> linear -> cross_entropy, the shape of a CNN step.
Tensor cnn_loss(const Tensor& x, const Tensor& k, const Tensor& kb, const Tensor& w, const Tensor& b, const Tensor& y) {
  Tensor h = relu(conv2d(x, k, kb, {1, 1}, {1, 1}));
  return cross_entropy(linear(reshape(h, {h.size(0), -1}), w, b), y);
}

TEST(CudaAutocast, ProductsRunInHalfTypesAndMatchTheCpu) {
  HEARTH_REQUIRE_CUDA();
  manual_seed(1);
  Tensor a = randn({64, 96}), w = randn({48, 96}), bias = randn({48});
  Tensor x = randn({4, 8, 16, 16}), k = randn({16, 8, 3, 3}), kb = randn({16});
  for (DType dt : {DType::bfloat16, DType::float16}) {
    SCOPED_TRACE(dtype_name(dt));
    Tensor cpu_lin, cpu_conv;
    {
      AutocastGuard autocast(kCpu, dt);
      cpu_lin = linear(a, w, bias);
      cpu_conv = conv2d(x, k, kb, {1, 1}, {1, 1});
    }
    AutocastGuard autocast(cuda0().kind, dt);
    Tensor lin = linear(a.to(cuda0()), w.to(cuda0()), bias.to(cuda0()));
    Tensor conv = conv2d(x.to(cuda0()), k.to(cuda0()), kb.to(cuda0()), {1, 1}, {1, 1});
    EXPECT_EQ(lin.dtype(), dt);
    EXPECT_EQ(conv.dtype(), dt);
    EXPECT_EQ(softmax(lin, 1).dtype(), DType::float32);
    // Same cast inputs on both devices; only the accumulation order differs.
    EXPECT_LT(relative_error(lin, cpu_lin), 1e-2);
    EXPECT_LT(relative_error(conv, cpu_conv), 1e-2);
  }
}

TEST(CudaAutocast, GradientsReachFloat32WeightsCloseToFp32) {
  HEARTH_REQUIRE_CUDA();
  manual_seed(2);
  const Device d = cuda0();
  Tensor x = randn({8, 3, 8, 8}, DType::float32, d);
  Tensor y = randint(0, 5, {8}, DType::int64, d);
  std::vector<Tensor> params = {randn({4, 3, 3, 3}, DType::float32, d), zeros({4}, DType::float32, d),
                                mul(randn({5, 256}, DType::float32, d), 0.05), zeros({5}, DType::float32, d)};
  // Values bfloat16 holds exactly: the two runs then differ by the compute
  // alone, not by how sensitive this small network is to rounding its inputs.
  x = x.to(DType::bfloat16).to(DType::float32);
  for (Tensor& p : params) p = p.to(DType::bfloat16).to(DType::float32).requires_grad_();
  auto grads = [&](bool mixed) {
    for (Tensor& p : params) p.zero_grad_();
    Tensor loss;
    {
      AutocastGuard autocast(d.kind, DType::bfloat16, mixed);
      loss = cnn_loss(x, params[0], params[1], params[2], params[3], y);
    }
    EXPECT_EQ(loss.dtype(), DType::float32);
    loss.backward();
    std::vector<Tensor> g;
    for (Tensor& p : params) g.push_back(p.grad().detach().clone());
    return g;
  };
  std::vector<Tensor> ref = grads(false), mixed = grads(true);
  for (size_t i = 0; i < params.size(); ++i) {
    EXPECT_EQ(mixed[i].dtype(), DType::float32) << "parameter " << i;
    EXPECT_LT(relative_error(mixed[i], ref[i]), 1e-2) << "parameter " << i;
  }
}

TEST(CudaAutocast, GradScalerSkipsAnOverflowingStep) {
  HEARTH_REQUIRE_CUDA();
  Tensor p = ones({1024}, DType::float32, cuda0());
  p.requires_grad_();
  optim::SGD opt({p}, optim::SGDOptions{.lr = 1.0});
  optim::GradScaler scaler;
  Tensor g = full({1024}, scaler.get_scale(), DType::float32, cuda0());
  p.set_grad(g.clone());
  EXPECT_TRUE(scaler.step(opt));
  scaler.update();
  EXPECT_EQ(sum(p).item<double>(), 0.0);  // 1 - 1 everywhere
  Tensor bad = g.clone();
  {
    NoGradGuard no_grad;
    fill_(bad.narrow(0, 700, 1), std::numeric_limits<double>::infinity());
  }
  p.set_grad(bad);
  EXPECT_FALSE(scaler.step(opt));
  scaler.update();
  EXPECT_EQ(sum(p).item<double>(), 0.0);  // unchanged
  EXPECT_EQ(scaler.get_scale(), 32768.0);
}

TEST(CudaAutocast, TrainerMixedPrecisionTrainsCloseToFp32) {
  HEARTH_REQUIRE_CUDA();
  hearth::testing::TempDir dir;
  auto data = train::testing::toy_dataset(256);
  auto run = [&](const std::string& precision) {
    train::TrainingArguments args = train::testing::toy_args(dir.file(precision));
    args.use_cpu = false;
    args.device = "cuda";
    args.precision = precision;
    args.per_device_train_batch_size = 32;
    args.num_train_epochs = 4;
    auto model = train::testing::toy_model(0, 0.0);
    train::Trainer trainer(model, args, data, data, {}, train::testing::quiet());
    train::TrainOutput out = trainer.train();
    for (const Tensor& p : model->parameters()) EXPECT_EQ(p.dtype(), DType::float32);
    return std::make_pair(out.training_loss, trainer.evaluate().at("eval_accuracy"));
  };
  auto [fp32_loss, fp32_acc] = run("fp32");
  for (const char* precision : {"bf16-mixed", "fp16-mixed"}) {
    SCOPED_TRACE(precision);
    auto [loss, acc] = run(precision);
    EXPECT_NEAR(loss, fp32_loss, 0.05 * fp32_loss);
    EXPECT_NEAR(acc, fp32_acc, 0.05);
  }
}

// ---- the optimizer writes the weights' half copies ----

class HalfCopies {
 public:
  explicit HalfCopies(bool on) : before_(optimizer_half_copies_enabled()) { set_optimizer_half_copies_enabled(on); }
  ~HalfCopies() { set_optimizer_half_copies_enabled(before_); }

 private:
  bool before_;
};

struct CopiesRun {
  std::vector<float> losses;
  std::vector<Tensor> params;  // on the CPU, after the last step
  std::vector<uint64_t> forward_casts;
};

// A few mixed-precision steps of a small CNN whose linear weight spans two
// of the update's chunks (64K elements) and whose bias ends off a multiple of
// four (the scalar tail). The input is in `dt` already: the forward's only
// casts are the parameters'.
CopiesRun train_with_copies(bool copies, bool adamw, DType dt, bool channels_last) {
  HalfCopies mode(copies);
  const Device d = cuda0();
  manual_seed(31);
  auto model = std::make_shared<nn::Sequential>(std::make_shared<nn::Conv2d>(3, 8, 3, 1, 1),
                                                std::make_shared<nn::ReLU>(), std::make_shared<nn::Flatten>(),
                                                std::make_shared<nn::Linear>(8 * 16 * 16, 37));
  model->to(d);
  if (channels_last) model->to(MemoryFormat::channels_last);
  Tensor x = randn({4, 3, 16, 16}, DType::float32, d).to(dt);
  if (channels_last) x = x.contiguous(MemoryFormat::channels_last);
  Tensor y = randint(0, 37, {4}, DType::int64, d);
  std::unique_ptr<optim::Optimizer> opt;
  if (adamw)
    opt = std::make_unique<optim::AdamW>(model->parameters(), optim::AdamWOptions{.lr = 1e-3});
  else
    opt = std::make_unique<optim::SGD>(model->parameters(),
                                       optim::SGDOptions{.lr = 0.05, .momentum = 0.9, .weight_decay = 1e-4});
  CopiesRun r;
  for (int s = 0; s < 4; ++s) {
    opt->zero_grad();
    Tensor loss;
    {
      AutocastGuard autocast(d.kind, dt);
      const uint64_t before = autocast_casts_made();
      Tensor logits = model->forward(x);
      r.forward_casts.push_back(autocast_casts_made() - before);
      loss = cross_entropy(logits, y);
    }
    loss.backward();
    opt->step();
    r.losses.push_back(loss.item<float>());
  }
  const Tensor w = model->parameters().front();
  if (copies) {
    const Tensor copy = valid_param_half_copy(w, dt);
    EXPECT_TRUE(copy.defined());
    if (copy.defined()) {
      EXPECT_EQ(copy.strides(), cast(w.detach(), dt).strides()) << "the copy is laid out as the cast";
      EXPECT_EQ(max_abs_diff(copy.to(DType::float32), cast(w.detach(), dt).to(DType::float32)), 0.0);
    }
  }
  for (const Tensor& p : model->parameters()) r.params.push_back(p.cpu());
  return r;
}

TEST(CudaAutocast, OptimizerHalfCopiesTrainBitIdentically) {
  HEARTH_REQUIRE_CUDA();
  for (bool adamw : {false, true})
    for (DType dt : {DType::bfloat16, DType::float16})
      for (bool channels_last : {false, true}) {
        SCOPED_TRACE(std::string(adamw ? "AdamW " : "SGD ") + dtype_name(dt) +
                     (channels_last ? " channels_last" : " contiguous"));
        const CopiesRun off = train_with_copies(false, adamw, dt, channels_last);
        const CopiesRun on = train_with_copies(true, adamw, dt, channels_last);
        EXPECT_EQ(on.losses, off.losses);
        ASSERT_EQ(on.params.size(), off.params.size());
        for (size_t i = 0; i < on.params.size(); ++i)
          EXPECT_EQ(max_abs_diff(on.params[i], off.params[i]), 0.0) << "parameter " << i;
        for (size_t s = 1; s < on.forward_casts.size(); ++s) {
          EXPECT_EQ(off.forward_casts[s], 4u) << "step " << s;
          EXPECT_EQ(on.forward_casts[s], 0u) << "step " << s;
        }
      }
}

// A parameter longer than one launch's 320 chunks: its copy's address goes on
// into the next launch with the rest of its slot.
TEST(CudaAutocast, OptimizerHalfCopiesOfAParameterSpanningLaunches) {
  HEARTH_REQUIRE_CUDA();
  HalfCopies on(true);
  const Device d = cuda0();
  manual_seed(32);
  const int64_t n = 320 * 65536 + 1003;
  for (DType dt : {DType::bfloat16, DType::float16}) {
    SCOPED_TRACE(dtype_name(dt));
    Tensor p = randn({n}, DType::float32, d);
    p.requires_grad_();
    Tensor small = randn({7}, DType::float32, d);
    small.requires_grad_();
    want_param_half_copy(p, dt);
    want_param_half_copy(small, dt);
    NoGradGuard no_grad;
    AdamStepAttrs a;
    a.lr = 1e-2;
    optim::adam_step_foreach_({small, p}, {randn({7}, DType::float32, d), randn({n}, DType::float32, d)},
                              {zeros({7}, DType::float32, d), zeros({n}, DType::float32, d)},
                              {zeros({7}, DType::float32, d), zeros({n}, DType::float32, d)}, {}, a);
    for (const Tensor& t : {small, p}) {
      const Tensor copy = valid_param_half_copy(t, dt);
      ASSERT_TRUE(copy.defined());
      EXPECT_EQ(max_abs_diff(copy.to(DType::float32), cast(t.detach(), dt).to(DType::float32)), 0.0);
    }
  }
}

}  // namespace
}  // namespace hearth::gpu_testing
