// The Trainer honours the Hugging Face fields it implements beyond the
// basics: label smoothing, the logging strategy and first step, an evaluation
// at the start, model-only checkpoints, the data seed, the TensorBoard
// directory and the TF32 switch.
#include <cstdlib>
#include <filesystem>
#include <vector>

#include <gtest/gtest.h>

#include "hearth/core/backend_options.h"
#include "hearth/ops/indexing.h"
#include "hearth/ops/nn_functional.h"
#include "hearth/train/checkpoint.h"
#include "hearth/train/trainer.h"
#include "tests/support/scoped_env.h"
#include "tests/support/temp_dir.h"
#include "tests/unit/train/train_testing.h"

namespace hearth::train {
namespace {

namespace fs = std::filesystem;
using hearth::testing::ScopedEnv;
using hearth::testing::TempDir;
using testing::LossRecorder;
using testing::quiet;
using testing::toy_args;
using testing::toy_dataset;
using testing::toy_model;

// The steps at which the training loss was logged.
std::vector<int64_t> loss_steps(const Trainer& t) {
  std::vector<int64_t> steps;
  for (const nlohmann::json& e : t.state().log_history)
    if (e.contains("loss")) steps.push_back(e["step"].get<int64_t>());
  return steps;
}

// One step over the whole toy set (8 samples, one batch), the weights left
// unchanged (learning rate 0): the step's loss is the loss of the initial model.
double first_step_loss(double smoothing, const std::shared_ptr<const data::Dataset>& set) {
  TempDir dir;
  TrainingArguments a = toy_args(dir.path());
  a.per_device_train_batch_size = 8;
  a.max_steps = 1;
  a.learning_rate = 0.0;
  a.label_smoothing_factor = smoothing;
  auto recorder = std::make_shared<LossRecorder>();
  Trainer t(toy_model(0, /*dropout=*/0.0), a, set, nullptr, {recorder}, quiet());
  t.train();
  return recorder->losses.at(0);
}

TEST(TrainerHfFields, LabelSmoothingIsPyTorchsCrossEntropyWithLabelSmoothing) {
  auto set = toy_dataset(8);
  std::vector<Tensor> xs, ys;
  for (int64_t i = 0; i < 8; ++i) {
    xs.push_back(set->get(i).at(data::field::kPixelValues).unsqueeze(0));
    ys.push_back(set->get(i).at(data::field::kLabels).reshape({1}));
  }
  auto model = toy_model(0, 0.0);
  const Tensor logits = model->forward(cat(xs, 0));
  const double expected = cross_entropy(logits, cat(ys, 0), Tensor(), -100, "mean", 0.1).item<double>();
  const double plain = cross_entropy(logits, cat(ys, 0)).item<double>();
  EXPECT_NEAR(first_step_loss(0.1, set), expected, 1e-6);
  EXPECT_NEAR(first_step_loss(0.0, set), plain, 1e-6);
  EXPECT_GT(std::abs(expected - plain), 1e-3);  // the smoothing is visible
}

TEST(TrainerHfFields, LabelSmoothingNeedsIntegerLabels) {
  TempDir dir;
  TrainingArguments a = toy_args(dir.path());
  a.label_smoothing_factor = 0.1;
  a.max_steps = 1;
  auto set = std::make_shared<data::TensorDataset>(
      data::Example::Map{{data::field::kPixelValues, ones({4, 4})}, {data::field::kLabels, zeros({4})}});
  TrainerOptions o = quiet();
  o.forward = [](nn::Module& m, const data::Batch& b) {
    Tensor logits = m.forward(b.at(data::field::kPixelValues));
    return ForwardOutput{logits.sum(), logits};
  };
  Trainer t(toy_model(), a, set, nullptr, {}, o);
  try {
    t.train();
    FAIL() << "float labels were smoothed";
  } catch (const ValueError& e) {
    EXPECT_NE(std::string(e.what()).find("label_smoothing_factor needs a classifier"), std::string::npos) << e.what();
  }
}

TEST(TrainerHfFields, LoggingStrategyAndFirstStep) {
  auto set = toy_dataset(32);  // 4 steps an epoch, 2 epochs
  auto run = [&](const std::string& strategy, bool first) {
    TempDir dir;
    TrainingArguments a = toy_args(dir.path());
    a.logging_strategy = strategy;
    a.logging_steps = 3;
    a.logging_first_step = first;
    Trainer t(toy_model(), a, set, nullptr, {}, quiet());
    t.train();
    return loss_steps(t);
  };
  EXPECT_EQ(run("steps", false), (std::vector<int64_t>{3, 6, 8}));
  EXPECT_EQ(run("steps", true), (std::vector<int64_t>{1, 3, 6, 8}));
  EXPECT_EQ(run("epoch", false), (std::vector<int64_t>{4, 8}));
  EXPECT_EQ(run("no", false), (std::vector<int64_t>{8}));  // the last step's loss is always known
}

TEST(TrainerHfFields, EvalOnStartEvaluatesBeforeTheFirstStep) {
  TempDir dir;
  TrainingArguments a = toy_args(dir.path());
  a.eval_on_start = true;
  a.max_steps = 2;
  Trainer t(toy_model(), a, toy_dataset(16), toy_dataset(8, 3), {}, quiet());
  t.train();
  const auto& h = t.state().log_history;
  ASSERT_FALSE(h.empty());
  EXPECT_TRUE(h.front().contains("eval_loss"));
  EXPECT_EQ(h.front()["step"], 0);
}

TEST(TrainerHfFields, SaveOnlyModelLeavesTheOptimizerOut) {
  TempDir dir;
  TrainingArguments a = toy_args(dir.path());
  a.save_strategy = "steps";
  a.save_steps = 2;
  a.max_steps = 2;
  a.save_only_model = true;
  Trainer t(toy_model(), a, toy_dataset(16), nullptr, {}, quiet());
  t.train();
  EXPECT_TRUE(fs::exists(fs::path(dir.path()) / "checkpoint-2" / kModelFile));
  EXPECT_FALSE(fs::exists(fs::path(dir.path()) / "checkpoint-2" / kOptimizerFile));
}

TEST(TrainerHfFields, DataSeedSetsTheDataOrderAlone) {
  auto set = toy_dataset(32);
  auto losses = [&](std::optional<int64_t> data_seed) {
    TempDir dir;
    TrainingArguments a = toy_args(dir.path());
    a.max_steps = 4;
    a.data_seed = data_seed;
    auto recorder = std::make_shared<LossRecorder>();
    Trainer t(toy_model(0, 0.0), a, set, nullptr, {recorder}, quiet());
    t.train();
    return recorder->losses;
  };
  EXPECT_EQ(losses(std::nullopt), losses(42));  // unset: seed (42)
  EXPECT_NE(losses(std::nullopt), losses(5));
}

TEST(TrainerHfFields, LoggingDirHoldsTheTensorBoardEvents) {
  TempDir dir;
  TrainingArguments a = toy_args(dir.path());
  a.report_to = {"tensorboard"};
  a.logging_dir = (fs::path(dir.path()) / "tb").string();
  a.max_steps = 1;
  Trainer t(toy_model(), a, toy_dataset(8), nullptr, {}, quiet());
  t.train();
  ASSERT_TRUE(fs::is_directory(*a.logging_dir));
  EXPECT_FALSE(fs::is_empty(*a.logging_dir));
  EXPECT_FALSE(fs::exists(fs::path(dir.path()) / "runs"));
}

// --tf32 sets the backend options' float32 matmul precision, as Hugging
// Face's tf32 sets PyTorch's; the environment is left as it was.
TEST(TrainerHfFields, Tf32SetsTheBackendOptionsNotTheEnvironment) {
  ScopedEnv restore("HEARTH_ALLOW_TF32", "1");
  const Float32MatmulPrecision before = float32_matmul_precision();
  TempDir dir;
  TrainingArguments a = toy_args(dir.path());
  set_float32_matmul_precision(Float32MatmulPrecision::high);
  a.tf32 = false;
  { Trainer t(toy_model(), a, toy_dataset(8), nullptr, {}, quiet()); }
  EXPECT_EQ(float32_matmul_precision(), Float32MatmulPrecision::highest);
  EXPECT_STREQ(std::getenv("HEARTH_ALLOW_TF32"), "1");
  a.tf32 = true;
  { Trainer t(toy_model(), a, toy_dataset(8), nullptr, {}, quiet()); }
  EXPECT_EQ(float32_matmul_precision(), Float32MatmulPrecision::high);
  // Unset leaves what the program chose.
  set_float32_matmul_precision(Float32MatmulPrecision::highest);
  a.tf32.reset();
  { Trainer t(toy_model(), a, toy_dataset(8), nullptr, {}, quiet()); }
  EXPECT_EQ(float32_matmul_precision(), Float32MatmulPrecision::highest);
  EXPECT_STREQ(std::getenv("HEARTH_ALLOW_TF32"), "1");
  set_float32_matmul_precision(before);
}

}  // namespace
}  // namespace hearth::train
