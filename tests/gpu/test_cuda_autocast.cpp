// Mixed precision on CUDA: autocast runs the products through the bf16/f16
// kernels (cuBLASLt, cuDNN) with results close to the CPU's, gradients reach
// float32 weights, the loss scaler skips an overflowing step with one host
// read, and the Trainer trains in bf16-mixed and fp16-mixed close to fp32.
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
#include "hearth/ops/nn_functional.h"
#include "hearth/ops/reduction.h"
#include "hearth/ops/view.h"
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

}  // namespace
}  // namespace hearth::gpu_testing
