// The Trainer in mixed precision: a small CNN trains under bf16-mixed on the
// CPU to a loss close to fp32's, fp16-mixed runs through the loss scaler whose
// state checkpoints keep, overflowing steps are skipped with the schedule, and
// what cannot run mixed precision fails before training.
#include <cmath>
#include <filesystem>
#include <fstream>
#include <vector>

#include <gtest/gtest.h>

#include "hearth/core/errors.h"
#include "hearth/core/generator.h"
#include "hearth/nn/models/small_cnn.h"
#include "hearth/ops/factory.h"
#include "hearth/train/checkpoint.h"
#include "hearth/train/trainer.h"
#include "tests/support/temp_dir.h"
#include "tests/support/test_device.h"
#include "tests/unit/train/train_testing.h"

namespace hearth::train {
namespace {

namespace fs = std::filesystem;
using hearth::testing::TempDir;
using testing::LossRecorder;
using testing::quiet;
using testing::toy_args;
using testing::toy_dataset;
using testing::toy_model;

// n grey 8x8 images in 3 classes: a bright top-left square, a bright
// bottom-right square, or a bright centre, under Gaussian noise.
std::shared_ptr<const data::Dataset> blob_images(int64_t n, uint64_t seed) {
  manual_seed(seed);
  std::vector<float> px = randn({n, 1, 8, 8}).to_vector<float>();
  std::vector<int64_t> labels = randint(0, 3, {n}).to_vector<int64_t>();
  for (int64_t i = 0; i < n; ++i) {
    const int64_t c = labels[static_cast<size_t>(i)];
    const int64_t r0 = c == 0 ? 0 : (c == 1 ? 4 : 2);
    for (int64_t r = r0; r < r0 + 4; ++r)
      for (int64_t q = r0; q < r0 + 4; ++q) px[static_cast<size_t>(i * 64 + r * 8 + q)] += 1.5f;
  }
  return std::make_shared<data::TensorDataset>(data::Example::Map{{data::field::kPixelValues, tensor(px, {n, 1, 8, 8})},
                                                                  {data::field::kLabels, tensor(labels, {n})}});
}

std::shared_ptr<nn::models::SmallCNN> small_cnn() {
  manual_seed(3);
  return std::make_shared<nn::models::SmallCNN>(nn::models::SmallCNNConfig{
      .num_classes = 3, .image_size = 8, .channels1 = 4, .channels2 = 8, .hidden = 16, .dropout = 0.0});
}

struct CnnRun {
  TrainOutput out;
  Metrics eval;
  std::vector<double> losses;
};

CnnRun train_cnn(const std::string& dir, const std::string& precision) {
  auto train_set = blob_images(192, 11), eval_set = blob_images(96, 12);
  TrainingArguments args = toy_args(dir);
  args.per_device_train_batch_size = 16;
  args.learning_rate = 5e-3;
  args.num_train_epochs = 2;
  args.precision = precision;
  auto rec = std::make_shared<LossRecorder>();
  auto model = small_cnn();
  Trainer trainer(model, args, train_set, eval_set, {rec}, quiet());
  CnnRun r{trainer.train(), trainer.evaluate(), rec->losses};
  for (const Tensor& p : model->parameters()) EXPECT_EQ(p.dtype(), DType::float32) << "master weights stay float32";
  return r;
}

TEST(TrainerPrecision, SmallCnnUnderBf16MixedTrainsCloseToFp32) {
  TempDir dir;
  CnnRun fp32 = train_cnn(dir.file("fp32"), "fp32");
  CnnRun bf16 = train_cnn(dir.file("bf16"), "bf16-mixed");
  ASSERT_EQ(fp32.losses.size(), 24u);
  ASSERT_EQ(bf16.losses.size(), 24u);
  // Both learn the task...
  EXPECT_LT(fp32.losses.back(), 0.5 * fp32.losses.front());
  EXPECT_LT(bf16.losses.back(), 0.5 * bf16.losses.front());
  EXPECT_GE(bf16.eval.at("eval_accuracy"), 0.9);
  // ...along nearly the same path: bf16 rounds, it does not change the optimisation.
  EXPECT_NEAR(bf16.out.training_loss, fp32.out.training_loss, 0.02 * fp32.out.training_loss);
  EXPECT_NEAR(bf16.eval.at("eval_loss"), fp32.eval.at("eval_loss"), 0.05 * fp32.eval.at("eval_loss"));
  // They do differ: the products really ran in bfloat16.
  EXPECT_NE(bf16.losses, fp32.losses);
}

TrainingArguments fp16_args(const std::string& dir) {
  TrainingArguments args = toy_args(dir);
  args.precision = "fp16-mixed";
  args.num_train_epochs = 1;  // 60 samples in batches of 8: 8 steps
  args.save_strategy = "steps";
  args.save_steps = 5;
  return args;
}

TEST(TrainerPrecision, Fp16MixedScalesTheLossAndResumesTheScalerFromCheckpoints) {
  TempDir dir;
  auto data = toy_dataset(60);
  auto full_rec = std::make_shared<LossRecorder>();
  Trainer full(toy_model(0), fp16_args(dir.file("full")), data, nullptr, {full_rec}, quiet());
  full.train();
  ASSERT_NE(full.grad_scaler(), nullptr);
  ASSERT_EQ(full_rec->losses.size(), 8u);
  for (double l : full_rec->losses) EXPECT_TRUE(std::isfinite(l));
  EXPECT_EQ(full.grad_scaler()->growth_tracker(), 8);  // eight good steps at the initial scale
  EXPECT_EQ(full.grad_scaler()->get_scale(), 65536.0);

  // The checkpoint holds the scaler's state at its step.
  const std::string ckpt = dir.file("full/checkpoint-5");
  ASSERT_TRUE(has_grad_scaler_state(ckpt));
  std::ifstream in(fs::path(ckpt) / kGradScalerFile);
  nlohmann::json saved = nlohmann::json::parse(in);
  EXPECT_EQ(saved["growth_tracker"], 5);
  EXPECT_EQ(saved["scale"], 65536.0);

  // Resuming restores it: the scaler ends where the uninterrupted run's did,
  // and the losses are the same, step for step.
  TrainingArguments args = fp16_args(dir.file("resumed"));
  args.resume_from_checkpoint = ckpt;
  auto rec = std::make_shared<LossRecorder>();
  Trainer resumed(toy_model(99), args, data, nullptr, {rec}, quiet());
  resumed.train();
  EXPECT_EQ(resumed.grad_scaler()->state_dict(), full.grad_scaler()->state_dict());
  EXPECT_EQ(rec->losses, std::vector<double>(full_rec->losses.begin() + 5, full_rec->losses.end()));

  // The fp32 run of the same task takes nearly the same path.
  TrainingArguments fp32 = fp16_args(dir.file("fp32"));
  fp32.precision = "fp32";
  auto fp32_rec = std::make_shared<LossRecorder>();
  Trainer reference(toy_model(0), fp32, data, nullptr, {fp32_rec}, quiet());
  reference.train();
  EXPECT_EQ(reference.grad_scaler(), nullptr);
  EXPECT_FALSE(has_grad_scaler_state(dir.file("fp32/checkpoint-5")));
  for (size_t i = 0; i < fp32_rec->losses.size(); ++i)
    EXPECT_NEAR(full_rec->losses[i], fp32_rec->losses[i], 0.02) << "step " << i + 1;
}

// Starts the loss scale so high that every scaled gradient overflows float16.
class HugeLossScale : public TrainerCallback {
 public:
  std::string name() const override { return "HugeLossScale"; }
  void on_train_begin(const TrainingArguments&, TrainerState&, TrainerControl&) override {
    nlohmann::json s = trainer->grad_scaler()->state_dict();
    s["scale"] = std::ldexp(1.0, 60);
    trainer->grad_scaler()->load_state_dict(s);
  }
  Trainer* trainer = nullptr;
};

TEST(TrainerPrecision, OverflowingFp16StepsAreSkippedWithTheirSchedule) {
  TempDir dir;
  TrainingArguments args = toy_args(dir.file("out"));
  args.precision = "fp16-mixed";
  args.max_steps = 4;
  args.max_grad_norm = 1.0;
  auto model = toy_model(0);
  std::vector<float> before;
  for (const Tensor& p : model->parameters()) {
    auto v = p.to_vector<float>();
    before.insert(before.end(), v.begin(), v.end());
  }
  auto huge = std::make_shared<HugeLossScale>();
  Trainer trainer(model, args, toy_dataset(60), nullptr, {huge}, quiet());
  huge->trainer = &trainer;
  TrainOutput out = trainer.train();
  EXPECT_EQ(out.global_step, 4);
  EXPECT_TRUE(std::isfinite(out.training_loss));  // the loss itself is never scaled
  std::vector<float> after;
  for (const Tensor& p : model->parameters()) {
    auto v = p.to_vector<float>();
    after.insert(after.end(), v.begin(), v.end());
  }
  EXPECT_EQ(after, before) << "every step overflowed, so none may update the weights";
  EXPECT_EQ(trainer.grad_scaler()->get_scale(), std::ldexp(1.0, 56));  // halved four times
  // The linear schedule did not advance either.
  EXPECT_DOUBLE_EQ(trainer.scheduler()->get_last_lr().at(0), args.learning_rate);
}

TEST(TrainerPrecision, RefusesWhatCannotRunMixedPrecision) {
  TempDir dir;
  auto data = toy_dataset(16);
  TrainingArguments args = toy_args(dir.file("out"));
  args.precision = "bf16-mixed";
  args.use_cpu = false;
  args.device = hearth::testing::test_device().str();
  // The test device here without its bmm and conv2d kernels.
  hearth::testing::ScopedOpRemoval lacks({hearth::OpId::bmm, hearth::OpId::conv2d});
  try {
    Trainer t(toy_model(0), args, data, nullptr, {}, quiet());
    FAIL() << "expected a ValueError";
  } catch (const ValueError& e) {
    const std::string msg = e.what();
    EXPECT_NE(msg.find("[trainer] precision \"bf16-mixed\" cannot run on testdev:0"), std::string::npos) << msg;
    EXPECT_NE(msg.find("needs its bmm kernel in bfloat16"), std::string::npos) << msg;
  }

  // Mixed precision keeps float32 master weights: a float64 model is refused.
  args = toy_args(dir.file("out"));
  args.precision = "fp16-mixed";
  auto model = toy_model(0);
  model->to(DType::float64);
  try {
    Trainer t(model, args, data, nullptr, {}, quiet());
    FAIL() << "expected a ValueError";
  } catch (const ValueError& e) {
    const std::string msg = e.what();
    EXPECT_NE(msg.find("precision \"fp16-mixed\" keeps the weights in float32"), std::string::npos) << msg;
    EXPECT_NE(msg.find("is float64"), std::string::npos) << msg;
  }
}

}  // namespace
}  // namespace hearth::train
