// A run that fails part way keeps what it has done: the steps completed since
// the last checkpoint are saved (the failed step given back first), the
// message names that checkpoint, and resuming from it ends where a run that
// never failed ends, bit for bit.
#include <atomic>
#include <filesystem>
#include <fstream>
#include <memory>
#include <sstream>

#include <gtest/gtest.h>

#include "hearth/core/errors.h"
#include "hearth/train/checkpoint.h"
#include "hearth/train/trainer.h"
#include "tests/support/temp_dir.h"
#include "tests/unit/train/train_testing.h"

namespace hearth::train {
namespace {

namespace fs = std::filesystem;
using hearth::testing::TempDir;
using testing::toy_args;
using testing::toy_dataset;
using testing::toy_model;

std::string bytes_of(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

// The toy data, whose reads fail from the `fail_at`-th on (a file that went
// bad under a running job).
class FailingDataset : public data::Dataset {
 public:
  FailingDataset(std::shared_ptr<const data::Dataset> inner, int64_t fail_at)
      : inner_(std::move(inner)), fail_at_(fail_at) {}
  int64_t size() const override { return inner_->size(); }
  data::Example get(int64_t index) const override {
    HEARTH_CHECK(reads_++ < fail_at_, IoError, "[test] sample ", index, ": the file went away");
    return inner_->get(index);
  }

 private:
  std::shared_ptr<const data::Dataset> inner_;
  int64_t fail_at_;
  mutable std::atomic<int64_t> reads_{0};
};

// Throws from on_step_end at `step`: the step is complete when it fails.
class FailAfterStep : public TrainerCallback {
 public:
  explicit FailAfterStep(int64_t step) : step_(step) {}
  std::string name() const override { return "FailAfterStep"; }
  void on_step_end(const TrainingArguments&, TrainerState& state, TrainerControl&) override {
    HEARTH_CHECK(state.global_step != step_, IoError, "[test] the evaluation set went away after step ", step_);
  }

 private:
  int64_t step_;
};

// 40 samples in batches of 8: 5 steps per epoch, 8 steps, dropout and a
// warm-up, a checkpoint only at the end.
TrainingArguments failure_args(const std::string& dir) {
  TrainingArguments args = toy_args(dir);
  args.max_steps = 8;
  args.warmup_steps = 2;
  args.save_strategy = "steps";
  args.save_steps = 100;
  args.step_graphs = false;
  return args;
}

TEST(TrainerFailureSave, AFailedReadSavesTheCompletedStepsAndTheRunResumesToTheSameEnd) {
  TempDir dir;
  auto data = toy_dataset(40);
  Trainer reference(toy_model(), failure_args(dir.file("reference")), data, nullptr, {}, testing::quiet());
  reference.train();
  ASSERT_TRUE(fs::exists(dir.file("reference/checkpoint-8")));

  // The 43rd read is the 4th sample of step 6: steps 1-5 are done.
  const std::string run = dir.file("run");
  std::ostringstream console;
  TrainerOptions opts = testing::quiet();
  opts.console = &console;
  Trainer failing(toy_model(), failure_args(run), std::make_shared<FailingDataset>(data, 42), nullptr, {}, opts);
  EXPECT_THROW(failing.train(), IoError);
  EXPECT_EQ(failing.state().global_step, 5);
  EXPECT_TRUE(fs::exists(run + "/checkpoint-5")) << console.str();
  EXPECT_NE(console.str().find("the run failed after step 5; saved " + run + "/checkpoint-5"), std::string::npos)
      << console.str();
  // What was saved is what a run that never failed had after step 5: resuming
  // ends with the same weights, so the failed step left nothing behind.
  TrainingArguments resume = failure_args(run);
  resume.resume_from_checkpoint = "latest";
  Trainer resumed(toy_model(), resume, data, nullptr, {}, testing::quiet());
  resumed.train();
  EXPECT_EQ(resumed.state().global_step, 8);
  EXPECT_EQ(bytes_of(run + "/checkpoint-8/" + kModelFile), bytes_of(dir.file("reference/checkpoint-8/") + kModelFile));
}

TEST(TrainerFailureSave, AFailureAfterACompletedStepSavesThatStep) {
  TempDir dir;
  const std::string run = dir.file("run");
  Trainer t(toy_model(), failure_args(run), toy_dataset(40), nullptr, {std::make_shared<FailAfterStep>(3)},
            testing::quiet());
  EXPECT_THROW(t.train(), IoError);
  EXPECT_TRUE(fs::exists(run + "/checkpoint-3"));
  EXPECT_EQ(list_checkpoints(run).size(), 1u);
}

TEST(TrainerFailureSave, NothingIsSavedWhereTheRunSavesNothing) {
  TempDir dir;
  const std::string run = dir.file("run");
  TrainingArguments args = failure_args(run);
  args.save_strategy = "no";
  Trainer t(toy_model(), args, toy_dataset(40), nullptr, {std::make_shared<FailAfterStep>(3)}, testing::quiet());
  EXPECT_THROW(t.train(), IoError);
  EXPECT_TRUE(list_checkpoints(run).empty());
}

TEST(TrainerFailureSave, AFailureRightAfterASaveNamesThatCheckpoint) {
  TempDir dir;
  const std::string run = dir.file("run");
  TrainingArguments args = failure_args(run);
  args.save_steps = 3;
  std::ostringstream console;
  TrainerOptions opts = testing::quiet();
  opts.console = &console;
  // The 27th read is in step 4: checkpoint-3 already holds every completed step.
  Trainer t(toy_model(), args, std::make_shared<FailingDataset>(toy_dataset(40), 26), nullptr, {}, opts);
  EXPECT_THROW(t.train(), IoError);
  EXPECT_EQ(list_checkpoints(run).size(), 1u);
  EXPECT_NE(console.str().find("the run failed after " + run + "/checkpoint-3, which holds every step it completed"),
            std::string::npos)
      << console.str();
}

}  // namespace
}  // namespace hearth::train
