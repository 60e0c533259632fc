// Checkpoints written by the Trainer: resuming bit for bit, Ctrl-C, pruning
// that keeps the best, loading the best model, early stopping.
#include <csignal>
#include <filesystem>
#include <fstream>

#include <gtest/gtest.h>

#include "hearth/core/errors.h"
#include "hearth/io/safetensors.h"
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

std::vector<float> flat_parameters(nn::Module& m) {
  std::vector<float> out;
  for (const Tensor& p : m.parameters()) {
    auto v = p.to_vector<float>();
    out.insert(out.end(), v.begin(), v.end());
  }
  return out;
}

std::vector<std::string> loss_lines(const std::string& path) {
  std::ifstream in(path);
  std::vector<std::string> out;
  for (std::string line; std::getline(in, line);)
    if (line.find("\"loss\"") != std::string::npos) out.push_back(line);
  return out;
}

// Arguments whose run crosses epochs mid-accumulation and uses dropout, the
// RNG and a warm-up, so that resuming must restore all of it.
TrainingArguments resume_args(const std::string& dir) {
  TrainingArguments args = toy_args(dir);
  args.gradient_accumulation_steps = 2;  // 60 samples: 8 batches, 4 steps per epoch
  args.num_train_epochs = 2;
  args.warmup_steps = 2;
  args.logging_steps = 3;
  args.save_strategy = "steps";
  args.save_steps = 5;
  args.report_to = {"jsonl"};
  return args;
}

TEST(TrainerResume, ContinuesBitForBitFromAMidEpochCheckpoint) {
  TempDir dir;
  auto data = toy_dataset(60);
  auto full_rec = std::make_shared<LossRecorder>();
  auto full_model = toy_model(0);
  Trainer full(full_model, resume_args(dir.file("full")), data, nullptr, {full_rec}, quiet());
  full.train();
  ASSERT_EQ(full_rec->losses.size(), 8u);
  ASSERT_TRUE(fs::exists(dir.file("full/checkpoint-5")));
  ASSERT_TRUE(fs::exists(dir.file("full/checkpoint-8")));  // the end of training is saved too

  TrainingArguments args = resume_args(dir.file("resumed"));
  args.resume_from_checkpoint = dir.file("full/checkpoint-5");
  auto rec = std::make_shared<LossRecorder>();
  auto model = toy_model(12345);  // other weights and RNG: the checkpoint must replace both
  Trainer resumed(model, args, data, nullptr, {rec}, quiet());
  resumed.train();
  EXPECT_EQ(rec->steps, (std::vector<int64_t>{6, 7, 8}));
  EXPECT_EQ(rec->losses, std::vector<double>(full_rec->losses.begin() + 5, full_rec->losses.end()));
  EXPECT_EQ(flat_parameters(*model), flat_parameters(*full_model));
  // The logged losses (steps 4 and 5 came with the checkpoint) and the metrics file match too.
  EXPECT_EQ(loss_lines(dir.file("resumed/metrics.jsonl")), loss_lines(dir.file("full/metrics.jsonl")));
  EXPECT_EQ(resumed.state().total_loss, full.state().total_loss);
}

// Sends itself SIGINT at the end of step `at`, as a Ctrl-C would.
class InterruptAt : public TrainerCallback {
 public:
  explicit InterruptAt(int64_t at) : at_(at) {}
  std::string name() const override { return "InterruptAt"; }
  void on_step_end(const TrainingArguments&, TrainerState& state, TrainerControl&) override {
    if (state.global_step == at_) std::raise(SIGINT);
  }

 private:
  int64_t at_;
};

TEST(TrainerResume, CtrlCSavesACheckpointAndTheRunResumesFromLatest) {
  TempDir dir;
  auto data = toy_dataset(60);
  auto full_rec = std::make_shared<LossRecorder>();
  TrainingArguments full_args = resume_args(dir.file("full"));
  full_args.save_strategy = "no";
  Trainer(toy_model(0), full_args, data, nullptr, {full_rec}, quiet()).train();

  TrainingArguments args = resume_args(dir.file("run"));
  args.save_strategy = "no";  // Ctrl-C saves anyway
  auto first = std::make_shared<LossRecorder>();
  std::ostringstream console;
  TrainerOptions opts = quiet();
  opts.console = &console;
  Trainer interrupted(toy_model(0), args, data, nullptr, {first, std::make_shared<InterruptAt>(3)}, opts);
  TrainOutput out = interrupted.train();
  EXPECT_EQ(out.interrupted_by_signal, SIGINT);
  EXPECT_EQ(out.global_step, 3);
  EXPECT_EQ(out.last_checkpoint, dir.file("run/checkpoint-3"));
  EXPECT_TRUE(fs::exists(dir.file("run/checkpoint-3/model.safetensors")));
  EXPECT_NE(console.str().find("hearth: stopped by SIGINT at step 3; saved " + dir.file("run/checkpoint-3") +
                               ". Resume with the same command and --resume_from_checkpoint"),
            std::string::npos)
      << console.str();

  args.resume_from_checkpoint = "latest";
  auto second = std::make_shared<LossRecorder>();
  Trainer resumed(toy_model(99), args, data, nullptr, {second}, quiet());
  TrainOutput out2 = resumed.train();
  EXPECT_EQ(out2.interrupted_by_signal, 0);
  std::vector<double> all = first->losses;
  all.insert(all.end(), second->losses.begin(), second->losses.end());
  EXPECT_EQ(all, full_rec->losses);
}

TEST(TrainerResume, PruningKeepsTheBestAndTheBestIsLoadedAtTheEnd) {
  TempDir dir;
  TrainingArguments args = toy_args(dir.file("run"));
  args.max_steps = 4;
  args.eval_strategy = args.save_strategy = "steps";
  args.eval_steps = args.save_steps = 1;
  args.save_total_limit = 2;
  args.load_best_model_at_end = true;
  // The highest evaluation loss counts as best, so the best is an early step
  // that pruning would otherwise delete.
  args.greater_is_better = true;
  auto model = toy_model();
  Trainer t(model, args, toy_dataset(64), toy_dataset(32, 8), {}, quiet());
  TrainOutput out = t.train();

  int64_t best_step = 0;
  double best = -1;
  for (const auto& e : t.state().log_history) {
    if (e.contains("eval_loss") && e["eval_loss"].get<double>() > best) {
      best = e["eval_loss"].get<double>();
      best_step = e["step"].get<int64_t>();
    }
  }
  EXPECT_EQ(*t.state().best_metric, best);
  EXPECT_EQ(out.best_checkpoint, dir.file("run/" + checkpoint_name(best_step)));
  std::vector<std::string> expected = {checkpoint_name(best_step), checkpoint_name(4)};
  if (best_step == 4) expected = {checkpoint_name(3), checkpoint_name(4)};
  std::vector<std::string> kept;
  for (const auto& [step, path] : list_checkpoints(dir.file("run"))) kept.push_back(fs::path(path).filename());
  EXPECT_EQ(kept, expected);

  auto saved = io::load_safetensors(out.best_checkpoint + "/model.safetensors");
  for (const auto& [name, p] : model->state_dict()) EXPECT_EQ(p.to_vector<float>(), saved.at(name).to_vector<float>());
}

TEST(TrainerResume, EarlyStoppingEndsTrainingAndItsStateIsSaved) {
  TempDir dir;
  TrainingArguments args = toy_args(dir.file("run"));
  args.learning_rate = 0.0;  // the evaluation loss never improves
  args.eval_strategy = args.save_strategy = "steps";
  args.eval_steps = args.save_steps = 1;
  auto stopper = std::make_shared<EarlyStoppingCallback>(2);
  Trainer t(toy_model(), args, toy_dataset(64), toy_dataset(16, 8), {stopper}, quiet());
  TrainOutput out = t.train();
  EXPECT_EQ(out.global_step, 3);  // best at 1, then two evaluations without improvement
  EXPECT_NE(out.stop_reason.find("early stopping: eval_loss has not improved"), std::string::npos) << out.stop_reason;
  nlohmann::json state = read_trainer_state(dir.file("run/checkpoint-2"));
  EXPECT_EQ(state["stateful_callbacks"]["EarlyStoppingCallback"]["patience_counter"], 1);
  EXPECT_EQ(state["global_step"], 2);
  const nlohmann::json& resume = state["stateful_callbacks"][TrainerState::kResumeStateKey];
  EXPECT_EQ(resume["data_position"]["batches_yielded"], 2);
  EXPECT_EQ(resume["rng_state"]["seed"], 0);
}

TEST(TrainerResume, ACheckpointThatFailsToSaveLeavesNothingBehind) {
  TempDir dir;
  TrainingArguments args = toy_args(dir.file("run"));
  args.max_steps = 2;
  args.save_strategy = "steps";
  args.save_steps = 2;
  TrainerOptions opts = quiet();
  opts.checkpoint_extra_files = [](const std::string&) { throw IoError("[test] no space left on device"); };
  Trainer t(toy_model(), args, toy_dataset(32), nullptr, {}, opts);
  EXPECT_THROW(t.train(), IoError);
  EXPECT_TRUE(list_checkpoints(dir.file("run")).empty());
  for (const auto& e : fs::directory_iterator(dir.file("run"))) ADD_FAILURE() << "left behind: " << e.path().filename();
}

}  // namespace
}  // namespace hearth::train
