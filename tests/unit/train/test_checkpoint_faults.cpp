// Saving a checkpoint when the disk fills up or the directory cannot be
// written: a clear error, the previous checkpoint intact, the run resumable
// to the same weights as a run that never failed. And the leftovers of a
// save cut short by a kill are cleared on the next start.
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>

#include <gtest/gtest.h>

#include "hearth/core/errors.h"
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
using testing::quiet;
using testing::toy_args;
using testing::toy_dataset;
using testing::toy_model;

std::string read_all(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

TrainingArguments every_step_args(const std::string& dir) {
  TrainingArguments args = toy_args(dir);
  args.max_steps = 5;
  args.save_strategy = "steps";
  args.save_steps = 1;
  return args;
}

// Makes every later atomic write fail after `bytes` bytes, from the save of `after_step` on.
class FillDiskAfterSave : public TrainerCallback {
 public:
  explicit FillDiskAfterSave(int64_t after_step) : after_step_(after_step) {}
  std::string name() const override { return "FillDiskAfterSave"; }
  void on_save(const TrainingArguments&, TrainerState& state, TrainerControl&, const std::string&) override {
    if (state.global_step == after_step_) ::setenv("HEARTH_TEST_FAIL_WRITE", "100", 1);
  }

 private:
  int64_t after_step_;
};

TEST(CheckpointFaults, AFullDiskKeepsThePreviousCheckpointAndTheRunResumesToTheSameWeights) {
  TempDir dir;
  auto data = toy_dataset(48);
  Trainer reference(toy_model(), every_step_args(dir.file("reference")), data, nullptr, {}, quiet());
  reference.train();

  const std::string run = dir.file("run");
  {
    ScopedEnv clear("HEARTH_TEST_FAIL_WRITE", "");
    Trainer failing(toy_model(), every_step_args(run), data, nullptr, {std::make_shared<FillDiskAfterSave>(2)},
                    quiet());
    try {
      failing.train();
      FAIL() << "the save after a full disk did not fail";
    } catch (const IoError& e) {
      const std::string msg = e.what();
      EXPECT_NE(msg.find("cannot save " + (fs::path(run) / "checkpoint-3").string()), std::string::npos) << msg;
      EXPECT_NE(msg.find("No space left on device"), std::string::npos) << msg;
      EXPECT_NE(msg.find("checkpoint-2 is intact"), std::string::npos) << msg;
      EXPECT_NE(msg.find("--resume_from_checkpoint latest"), std::string::npos) << msg;
    }
  }  // the disk has room again
  auto saved = list_checkpoints(run);
  ASSERT_EQ(saved.size(), 2u);
  EXPECT_EQ(saved.back().first, 2);
  for (const auto& e : fs::directory_iterator(run))
    EXPECT_EQ(e.path().filename().string().find(".tmp"), std::string::npos) << "left behind: " << e.path();
  EXPECT_EQ(read_all(run + "/checkpoint-2/model.safetensors"),
            read_all(dir.file("reference") + "/checkpoint-2/model.safetensors"));

  TrainingArguments resume = every_step_args(run);
  resume.resume_from_checkpoint = "latest";
  Trainer resumed(toy_model(), resume, data, nullptr, {}, quiet());
  resumed.train();
  for (const char* file : {kModelFile, kOptimizerFile})
    EXPECT_EQ(read_all(run + "/checkpoint-5/" + file), read_all(dir.file("reference") + "/checkpoint-5/" + file))
        << file << " differs from the uninterrupted run's";
}

TEST(CheckpointFaults, AnUnwritableOutputDirectoryFailsTheSaveByName) {
  if (::geteuid() == 0) GTEST_SKIP() << "root writes into read-only directories; the full-disk test covers this path";
  TempDir dir;
  const std::string run = dir.file("run");
  fs::create_directories(run);
  fs::permissions(run, fs::perms::owner_read | fs::perms::owner_exec);
  TrainingArguments args = every_step_args(run);
  Trainer t(toy_model(), args, toy_dataset(16), nullptr, {}, quiet());
  try {
    t.train();
    FAIL() << "saving into a read-only directory did not fail";
  } catch (const IoError& e) {
    EXPECT_NE(std::string(e.what()).find(run), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("Permission denied"), std::string::npos) << e.what();
  }
  fs::permissions(run, fs::perms::owner_all);
}

TEST(CheckpointFaults, AnOutputDirectoryThatCannotBeCreatedIsAnIoErrorNamingIt) {
  // /proc refuses new directories even to root.
  const std::string run = "/proc/hearth-no-such-run/out";
  Trainer t(toy_model(), every_step_args(run), toy_dataset(16), nullptr, {}, quiet());
  try {
    t.train();
    FAIL() << "training into " << run << " did not fail";
  } catch (const IoError& e) {
    EXPECT_NE(std::string(e.what()).find("output_dir '" + run + "': cannot create it"), std::string::npos) << e.what();
  }
}

TEST(CheckpointFaults, UnfinishedSavesAreRemovedAndNothingElse) {
  TempDir dir;
  for (const char* name : {"checkpoint-3.tmp-a1B2c3", "checkpoint-4.old-Zz9yY8", "checkpoint-5", "notes.tmp-a1B2c3",
                           "checkpoint-x.tmp-a1B2c3", "checkpoint-6.tmp-short"})
    fs::create_directories(dir.file(name));
  std::vector<std::string> removed = remove_unfinished_checkpoints(dir.path());
  std::sort(removed.begin(), removed.end());
  ASSERT_EQ(removed.size(), 2u);
  EXPECT_EQ(fs::path(removed[0]).filename(), "checkpoint-3.tmp-a1B2c3");
  EXPECT_EQ(fs::path(removed[1]).filename(), "checkpoint-4.old-Zz9yY8");
  for (const char* kept : {"checkpoint-5", "notes.tmp-a1B2c3", "checkpoint-x.tmp-a1B2c3", "checkpoint-6.tmp-short"})
    EXPECT_TRUE(fs::exists(dir.file(kept))) << kept;
  EXPECT_TRUE(remove_unfinished_checkpoints(dir.file("absent")).empty());
}

TEST(CheckpointFaults, TrainingClearsWhatAKilledSaveLeftBehind) {
  TempDir dir;
  const std::string run = dir.file("run");
  fs::create_directories(run + "/checkpoint-7.tmp-Ab12Cd/partial");
  TrainingArguments args = toy_args(run);
  args.max_steps = 1;
  Trainer t(toy_model(), args, toy_dataset(16), nullptr, {}, quiet());
  t.train();
  EXPECT_FALSE(fs::exists(run + "/checkpoint-7.tmp-Ab12Cd"));
}

}  // namespace
}  // namespace hearth::train
