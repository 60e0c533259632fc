#include <cmath>
#include <filesystem>
#include <fstream>
#include <limits>
#include <sstream>

#include <gtest/gtest.h>

#include "hearth/core/errors.h"
#include "hearth/ops/elementwise.h"
#include "hearth/train/checkpoint.h"
#include "hearth/train/trainer.h"
#include "tests/support/temp_dir.h"
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

std::vector<std::string> lines_of(const std::string& path) {
  std::ifstream in(path);
  std::vector<std::string> out;
  for (std::string line; std::getline(in, line);) out.push_back(line);
  return out;
}

std::vector<nlohmann::json> loss_entries(const TrainerState& s) {
  std::vector<nlohmann::json> out;
  for (const auto& e : s.log_history)
    if (e.contains("loss")) out.push_back(e);
  return out;
}

TEST(Trainer, LearnsTheToyTaskLogsAndEvaluates) {
  TempDir dir;
  TrainingArguments args = toy_args(dir.file("run"));
  args.num_train_epochs = 5;
  args.eval_strategy = "epoch";
  args.logging_steps = 8;
  args.report_to = {"jsonl"};
  Trainer t(toy_model(), args, toy_dataset(256), toy_dataset(128, 8), {}, quiet());
  TrainOutput out = t.train();
  EXPECT_EQ(out.global_step, 160);  // 5 epochs of 256 / 8 batches
  EXPECT_DOUBLE_EQ(t.state().epoch, 5.0);
  EXPECT_EQ(t.state().steps_per_epoch, 32);
  EXPECT_TRUE(out.last_checkpoint.empty());  // save_strategy "no"
  EXPECT_GT(out.metrics.at("train_runtime"), 0.0);
  EXPECT_EQ(out.interrupted_by_signal, 0);

  auto losses = loss_entries(t.state());
  ASSERT_EQ(losses.size(), 20u);
  EXPECT_LT(losses.back()["loss"].get<double>(), losses.front()["loss"].get<double>());
  EXPECT_EQ(losses[0]["step"], 8);
  EXPECT_TRUE(losses[0].contains("grad_norm"));
  EXPECT_TRUE(losses[0].contains("learning_rate"));
  EXPECT_NEAR(out.training_loss, t.state().total_loss / 160, 1e-12);

  Metrics m = t.evaluate();
  EXPECT_GT(m.at("eval_accuracy"), 0.75);
  EXPECT_EQ(m.count("eval_f1"), 0u);
  EXPECT_TRUE(m.count("eval_runtime"));

  // 20 losses, 5 evaluations, the summary, the evaluation after training.
  auto lines = lines_of(t.metrics_path());
  ASSERT_EQ(lines.size(), 27u);
  EXPECT_NE(lines[4].find("\"eval_accuracy\""), std::string::npos);  // after the epoch's 4 losses
  EXPECT_NE(lines[25].find("\"train_runtime\""), std::string::npos);
}

// What Hugging Face's Trainer reports besides: total_flos (6 x parameters x
// samples for inputs without token ids), eval_steps_per_second, and the best
// model tracked only when something asks for it, then with its checkpoint.
TEST(Trainer, ReportsFlosEvalStepsAndTheBestModelAsHuggingFaceDoes) {
  TempDir dir;
  TrainingArguments args = toy_args(dir.file("run"));
  args.max_steps = 4;
  args.eval_strategy = args.save_strategy = "steps";
  args.eval_steps = args.save_steps = 2;
  Trainer t(toy_model(), args, toy_dataset(64), toy_dataset(40, 8), {}, quiet());
  TrainOutput out = t.train();
  double parameters = 0;
  for (const Tensor& p : t.model().parameters()) parameters += static_cast<double>(p.numel());
  EXPECT_DOUBLE_EQ(out.metrics.at("total_flos"), 6.0 * parameters * 8 * 4);  // 4 steps of 8 samples
  EXPECT_DOUBLE_EQ(t.state().total_flos, out.metrics.at("total_flos"));
  Metrics m = t.evaluate();
  ASSERT_TRUE(m.count("eval_steps_per_second"));
  // 40 samples in batches of 16: 3 steps.
  EXPECT_NEAR(m.at("eval_steps_per_second"), 3.0 / m.at("eval_runtime"), 1e-9);
  // metric_for_best_model unset: neither best_metric nor best_model_checkpoint.
  nlohmann::json state = read_trainer_state(dir.file("run/checkpoint-4"));
  EXPECT_TRUE(state["best_metric"].is_null());
  EXPECT_TRUE(state["best_model_checkpoint"].is_null());

  args.output_dir = dir.file("run2");
  args.metric_for_best_model = "loss";
  Trainer t2(toy_model(), args, toy_dataset(64), toy_dataset(40, 8), {}, quiet());
  t2.train();
  state = read_trainer_state(dir.file("run2/checkpoint-4"));
  ASSERT_FALSE(state["best_metric"].is_null());
  const int64_t best_step = state["best_global_step"].get<int64_t>();
  EXPECT_EQ(state["best_model_checkpoint"], checkpoint_name(best_step));
}

// save_strategy "best": a checkpoint after each evaluation that finds a new
// best model, and none otherwise (nor at the end). With a learning rate of 0
// the loss never improves on the first evaluation's.
TEST(Trainer, SaveStrategyBestSavesOnlyNewBestModels) {
  TempDir dir;
  TrainingArguments args = toy_args(dir.file("run"));
  args.learning_rate = 0.0;
  args.max_steps = 3;
  args.eval_strategy = "steps";
  args.eval_steps = 1;
  args.save_strategy = "best";
  args.load_best_model_at_end = true;
  Trainer t(toy_model(), args, toy_dataset(64), toy_dataset(16, 8), {}, quiet());
  TrainOutput out = t.train();
  std::vector<std::string> saved;
  for (const auto& [step, path] : list_checkpoints(dir.file("run"))) saved.push_back(checkpoint_name(step));
  EXPECT_EQ(saved, std::vector<std::string>{"checkpoint-1"});
  EXPECT_EQ(out.best_checkpoint, dir.file("run/checkpoint-1"));
  EXPECT_EQ(t.state().best_global_step, 1);
}

TEST(Trainer, ALastBatchOfOneIsDroppedAndSaidOnce) {
  // 17 samples in batches of 8: 8 + 8 + 1, and batch norm cannot train on one sample.
  TempDir dir;
  TrainingArguments args = toy_args(dir.file("run"));
  args.num_train_epochs = 3;
  std::ostringstream console;
  TrainerOptions opts;
  opts.console = &console;
  opts.progress_bar = false;
  Trainer t(toy_model(), args, toy_dataset(17), nullptr, {}, opts);
  t.train();
  EXPECT_EQ(t.state().steps_per_epoch, 2);
  EXPECT_EQ(t.state().global_step, 6);
  const std::string text = console.str();
  const std::string said = "last training batch would hold 1 sample";
  ASSERT_NE(text.find(said), std::string::npos) << text;
  EXPECT_EQ(text.find(said, text.find(said) + 1), std::string::npos) << text;

  // A last batch of two is kept; dataloader_drop_last drops it.
  TrainingArguments two = toy_args(dir.file("two"));
  Trainer kept(toy_model(), two, toy_dataset(18), nullptr, {}, quiet());
  kept.train();
  EXPECT_EQ(kept.state().steps_per_epoch, 3);
  two.output_dir = dir.file("dropped");
  two.dataloader_drop_last = true;
  Trainer dropped(toy_model(), two, toy_dataset(18), nullptr, {}, quiet());
  dropped.train();
  EXPECT_EQ(dropped.state().steps_per_epoch, 2);
}

TEST(Trainer, AccumulationEqualsOneLargeBatchEvenWithAShortLastGroup) {
  // 20 samples: batches of 4 in groups of 3 (12 + 8 samples) against batches of 12 (12 + 8).
  auto ds = toy_dataset(20, 7, DType::float64);
  auto train_with = [&](int64_t batch, int64_t accumulation) {
    auto model = toy_model(3, /*dropout=*/0.0);
    model->to(DType::float64);
    TempDir dir;
    TrainingArguments args = toy_args(dir.file("run"));
    args.per_device_train_batch_size = batch;
    args.gradient_accumulation_steps = accumulation;
    args.num_train_epochs = 2;
    args.max_grad_norm = 0.5;
    Trainer t(model, args, ds, nullptr, {}, quiet());
    t.train();
    EXPECT_EQ(t.state().global_step, 4);
    return model->state_dict();
  };
  nn::StateDict big = train_with(12, 1);
  nn::StateDict small = train_with(4, 3);
  for (const auto& [name, t] : big) {
    std::vector<double> a = t.to_vector<double>(), b = small.at(name).to_vector<double>();
    for (size_t i = 0; i < a.size(); ++i) EXPECT_NEAR(a[i], b[i], 1e-12) << name << "[" << i << "]";
  }
}

TEST(Trainer, TheScheduleStepsOncePerOptimizerStep) {
  TempDir dir;
  TrainingArguments args = toy_args(dir.file("run"));
  args.per_device_train_batch_size = 4;
  args.gradient_accumulation_steps = 2;  // 32 samples: 8 batches, 4 steps per epoch
  args.num_train_epochs = 2;
  args.warmup_steps = 2;
  args.learning_rate = 0.1;
  Trainer t(toy_model(), args, toy_dataset(32), nullptr, {}, quiet());
  t.train();
  EXPECT_EQ(t.state().max_steps, 8);
  EXPECT_EQ(t.state().train_batch_size, 8);
  EXPECT_EQ(t.scheduler()->last_epoch(), 8);
  auto losses = loss_entries(t.state());
  ASSERT_EQ(losses.size(), 8u);
  // Linear warm-up over 2 steps, then linear decay to 0 at step 8; each entry
  // shows the rate the schedule set after that step.
  const double expected[] = {0.05, 0.1, 0.1 * 5 / 6, 0.1 * 4 / 6, 0.1 * 3 / 6, 0.1 * 2 / 6, 0.1 / 6, 0.0};
  for (size_t i = 0; i < 8; ++i) {
    EXPECT_EQ(losses[i]["step"], static_cast<int64_t>(i + 1));
    EXPECT_NEAR(losses[i]["learning_rate"].get<double>(), expected[i], 1e-12) << "step " << i + 1;
    EXPECT_NEAR(losses[i]["epoch"].get<double>(), (i + 1) / 4.0, 1e-12);
  }
}

TEST(Trainer, MaxStepsOverridesEpochsAndWarmupRatioRoundsUp) {
  TempDir dir;
  TrainingArguments args = toy_args(dir.file("run"));
  args.max_steps = 5;
  args.num_train_epochs = 100;
  args.warmup_ratio = 0.3;  // ceil(1.5) = 2 steps
  args.learning_rate = 1.0;
  Trainer t(toy_model(), args, toy_dataset(32), nullptr, {}, quiet());  // 4 steps per epoch
  t.train();
  EXPECT_EQ(t.state().global_step, 5);
  EXPECT_DOUBLE_EQ(t.state().epoch, 1.25);
  EXPECT_DOUBLE_EQ(loss_entries(t.state())[0]["learning_rate"].get<double>(), 0.5);
}

// Produces NaN logits on the k-th call of forward.
class NanOnCall : public nn::Module {
 public:
  explicit NanOnCall(int k) : Module("NanOnCall"), k_(k) { inner = register_module("inner", toy_model(0, 0.0)); }
  Tensor forward(const Tensor& x) override {
    Tensor y = inner->forward(x);
    return ++calls_ == k_ ? mul(y, std::numeric_limits<double>::quiet_NaN()) : y;
  }
  std::shared_ptr<nn::models::MLP> inner;

 private:
  int k_;
  int calls_ = 0;
};

TEST(Trainer, ANonFiniteLossStopsTrainingNamingTheStep) {
  TempDir dir;
  TrainingArguments args = toy_args(dir.file("run"));
  args.logging_steps = 100;
  Trainer t(std::make_shared<NanOnCall>(3), args, toy_dataset(64), nullptr, {}, quiet());
  try {
    t.train();
    FAIL() << "a NaN loss must stop training";
  } catch (const ValueError& e) {
    std::string msg = e.what();
    EXPECT_NE(msg.find("[trainer] the loss is nan at step 3 (epoch 0.375); training stopped."), std::string::npos)
        << msg;
    EXPECT_NE(msg.find("learning_rate"), std::string::npos);
  }
  EXPECT_EQ(t.state().global_step, 3);
  EXPECT_FALSE(t.state().is_training);
}

TEST(Trainer, RejectsWhatCannotTrain) {
  TempDir dir;
  TrainingArguments args = toy_args(dir.file("run"));
  EXPECT_THROW(Trainer(nullptr, args, toy_dataset(8), nullptr, {}, quiet()), ValueError);

  Trainer no_data(toy_model(), args, nullptr, toy_dataset(8), {}, quiet());
  EXPECT_THROW(no_data.train(), ValueError);
  EXPECT_GT(no_data.evaluate().at("eval_loss"), 0.0);  // evaluation alone needs no training set

  args.eval_strategy = "epoch";
  Trainer no_eval(toy_model(), args, toy_dataset(8), nullptr, {}, quiet());
  EXPECT_THROW(no_eval.train(), ValueError);
  EXPECT_THROW(no_eval.evaluate(), ValueError);

  args.eval_strategy = "no";
  args.dataloader_drop_last = true;
  Trainer too_small(toy_model(), args, toy_dataset(5), nullptr, {}, quiet());
  try {
    too_small.train();
    FAIL();
  } catch (const ValueError& e) {
    EXPECT_NE(std::string(e.what()).find("the training set has 5 samples: not one batch of 8"), std::string::npos);
  }

  args.dataloader_drop_last = false;
  args.gradient_checkpointing = true;  // the toy model has no block that can recompute
  try {
    Trainer no_checkpointing(toy_model(), args, toy_dataset(8), nullptr, {}, quiet());
    FAIL();
  } catch (const ValueError& e) {
    EXPECT_NE(std::string(e.what()).find("gradient_checkpointing"), std::string::npos) << e.what();
  }
  args.gradient_checkpointing = false;

  args.device = "cuda:99";
  args.use_cpu = false;
  EXPECT_THROW(Trainer(toy_model(), args, toy_dataset(8), nullptr, {}, quiet()), DeviceError);
}

TEST(Trainer, RefusesToMixWithAnEarlierRunUnlessTold) {
  TempDir dir;
  TrainingArguments args = toy_args(dir.file("run"));
  args.max_steps = 2;
  args.save_strategy = "steps";
  args.save_steps = 1;
  Trainer(toy_model(), args, toy_dataset(32), nullptr, {}, quiet()).train();
  EXPECT_TRUE(fs::exists(dir.file("run/checkpoint-2")));
  try {
    Trainer(toy_model(), args, toy_dataset(32), nullptr, {}, quiet()).train();
    FAIL();
  } catch (const ValueError& e) {
    EXPECT_NE(std::string(e.what()).find("already holds checkpoints (checkpoint-1 ... checkpoint-2); pass "
                                         "--resume_from_checkpoint latest"),
              std::string::npos)
        << e.what();
  }
  args.overwrite_output_dir = true;
  args.max_steps = 1;
  Trainer(toy_model(), args, toy_dataset(32), nullptr, {}, quiet()).train();
  EXPECT_TRUE(fs::exists(dir.file("run/checkpoint-1")));
  EXPECT_FALSE(fs::exists(dir.file("run/checkpoint-2")));
}

TEST(Trainer, PrintsTheDeviceAndPlainProgressLines) {
  TempDir dir;
  TrainingArguments args = toy_args(dir.file("run"));
  args.logging_steps = 4;
  std::ostringstream console;
  TrainerOptions opts = quiet();
  opts.console = &console;
  Trainer t(toy_model(), args, toy_dataset(32), nullptr, {}, opts);
  t.train();
  std::string s = console.str();
  EXPECT_EQ(s.rfind("hearth: training on cpu (use_cpu is set)\n", 0), 0u) << s;
  EXPECT_NE(s.find("hearth: 32 training samples; 8 steps of 8 samples"), std::string::npos) << s;
  EXPECT_NE(s.find("\nstep 4/8 | epoch 1.00 | loss "), std::string::npos) << s;
  EXPECT_NE(s.find("\nstep 8/8 | epoch 2.00 | loss "), std::string::npos) << s;
  EXPECT_EQ(s.find('\r'), std::string::npos);
}

}  // namespace
}  // namespace hearth::train
