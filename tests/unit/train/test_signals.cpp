// Signals while training: SIGHUP (a closed terminal) saves and stops like
// SIGTERM; a second signal inside a save stops at once and says which
// checkpoint is unfinished and which one to resume from.
#include <stdlib.h>

#include <csignal>
#include <cstdlib>
#include <filesystem>
#include <optional>
#include <string>

#include <gtest/gtest.h>

#include "hearth/train/checkpoint.h"
#include "hearth/train/signals.h"
#include "hearth/train/trainer.h"
#include "tests/support/temp_dir.h"
#include "tests/unit/train/train_testing.h"

namespace hearth::train {
namespace {

namespace fs = std::filesystem;
using hearth::testing::TempDir;
using testing::quiet;
using testing::toy_args;
using testing::toy_dataset;
using testing::toy_model;

class RaiseAt : public TrainerCallback {
 public:
  RaiseAt(int64_t at, int sig) : at_(at), sig_(sig) {}
  std::string name() const override { return "RaiseAt"; }
  void on_step_end(const TrainingArguments&, TrainerState& state, TrainerControl&) override {
    if (state.global_step == at_) std::raise(sig_);
  }

 private:
  int64_t at_;
  int sig_;
};

TEST(TrainerSignals, SighupSavesACheckpointAndStopsLikeSigterm) {
  TempDir dir;
  TrainingArguments args = toy_args(dir.file("run"));
  args.max_steps = 5;
  Trainer t(toy_model(), args, toy_dataset(64), nullptr, {std::make_shared<RaiseAt>(2, SIGHUP)}, quiet());
  TrainOutput out = t.train();
  EXPECT_EQ(out.interrupted_by_signal, SIGHUP);
  EXPECT_EQ(out.global_step, 2);
  EXPECT_TRUE(fs::exists(dir.file("run/checkpoint-2/model.safetensors")));
  EXPECT_STREQ(signal_name(SIGHUP), "SIGHUP");
}

TEST(TrainerSignalsDeathTest, ASecondSignalInsideASaveNamesTheUnfinishedAndTheResumableCheckpoint) {
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  // The child runs this test again from the top: the environment hands it the
  // parent's directory, so that the parent can look at what it left.
  std::optional<TempDir> temp;
  std::string root;
  if (const char* inherited = std::getenv("HEARTH_TEST_SIGNAL_DIR")) {
    root = inherited;
  } else {
    temp.emplace();
    root = temp->path();
    ::setenv("HEARTH_TEST_SIGNAL_DIR", root.c_str(), 1);
  }
  const std::string run = (fs::path(root) / "run").string();
  TrainingArguments args = toy_args(run);
  args.max_steps = 5;
  args.save_strategy = "steps";
  args.save_steps = 1;
  TrainerOptions opts = quiet();
  // The first SIGINT comes at the end of step 2; the second inside the save of checkpoint-2.
  opts.checkpoint_extra_files = [](const std::string& tmp) {
    if (fs::path(tmp).filename().string().rfind("checkpoint-2.", 0) == 0) std::raise(SIGINT);
  };
  EXPECT_EXIT(
      {
        Trainer t(toy_model(), args, toy_dataset(64), nullptr, {std::make_shared<RaiseAt>(2, SIGINT)}, opts);
        t.train();
      },
      ::testing::KilledBySignal(SIGINT),
      "the checkpoint being saved, [^ ]*/run/checkpoint-2, was not finished.*Resume from [^ ]*/run/checkpoint-1 ");
  ::unsetenv("HEARTH_TEST_SIGNAL_DIR");
  EXPECT_FALSE(fs::exists(run + "/checkpoint-2"));
  EXPECT_TRUE(fs::exists(run + "/checkpoint-1/model.safetensors"));
}

}  // namespace
}  // namespace hearth::train
