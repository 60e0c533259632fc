// A crowded output folder: checkpoint references that survive another working
// directory, a best checkpoint that must be this run's, rotation that never
// deletes the best or the latest.
#include <unistd.h>

#include <algorithm>
#include <csignal>
#include <filesystem>
#include <fstream>
#include <sstream>

#include <gtest/gtest.h>
#include <sys/resource.h>
#include <sys/stat.h>

#include "hearth/core/errors.h"
#include "hearth/io/log_file.h"
#include "hearth/io/safetensors.h"
#include "hearth/train/checkpoint.h"
#include "hearth/train/output_dir_lock.h"
#include "hearth/train/trainer.h"
#include "tests/support/fifo_guard.h"
#include "tests/support/scoped_env.h"
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

// Runs the test body in another working directory, restoring it after.
class WorkingDirectory {
 public:
  explicit WorkingDirectory(const std::string& dir) : previous_(fs::current_path()) { fs::current_path(dir); }
  ~WorkingDirectory() {
    std::error_code ec;
    fs::current_path(previous_, ec);
  }

 private:
  fs::path previous_;
};

// Evaluates and saves every step; a zero learning rate keeps the evaluation
// loss flat, so the best model stays the first step's.
TrainingArguments best_at_first_step(const std::string& output_dir, int64_t max_steps) {
  TrainingArguments args = toy_args(output_dir);
  args.learning_rate = 0.0;
  args.max_steps = max_steps;
  args.eval_strategy = args.save_strategy = "steps";
  args.eval_steps = args.save_steps = 1;
  args.load_best_model_at_end = true;
  return args;
}

std::map<std::string, std::vector<float>> weights(const std::string& checkpoint) {
  std::map<std::string, std::vector<float>> out;
  for (const auto& [name, t] : io::load_safetensors(checkpoint + "/" + kModelFile)) out[name] = t.to_vector<float>();
  return out;
}

std::map<std::string, std::vector<float>> weights(nn::Module& model) {
  std::map<std::string, std::vector<float>> out;
  for (const auto& [name, t] : model.state_dict()) out[name] = t.to_vector<float>();
  return out;
}

TEST(CheckpointReference, IsRelativeToOutputDirAndReadsOlderPaths) {
  EXPECT_EQ(checkpoint_reference("checkpoint-2"), "checkpoint-2");
  EXPECT_EQ(checkpoint_reference("runs/b/checkpoint-2"), "checkpoint-2");
  EXPECT_EQ(checkpoint_reference("/data/runs/b/checkpoint-12"), "checkpoint-12");
  EXPECT_EQ(checkpoint_reference("/data/runs/b/checkpoint-12/"), "checkpoint-12");
  EXPECT_EQ(checkpoint_reference(""), "");
  EXPECT_EQ(resolve_checkpoint_reference("/out", "checkpoint-2"), "/out/checkpoint-2");
  EXPECT_EQ(resolve_checkpoint_reference("/out", "runs/b/checkpoint-2"), "/out/checkpoint-2");
  EXPECT_EQ(resolve_checkpoint_reference("/out", "/elsewhere/model"), "/elsewhere/model");
  EXPECT_EQ(resolve_checkpoint_reference("/out", ""), "");
}

TEST(CheckpointReference, RotationKeepsEveryProtectedCheckpoint) {
  TempDir dir;
  for (int s : {1, 2, 3, 4, 5}) fs::create_directories(dir.file(checkpoint_name(s)));
  // The best (2) and the one just saved (4), although 5 is newer: all stay.
  rotate_checkpoints(dir.path(), 1, std::vector<std::string>{dir.file("checkpoint-2"), dir.file("checkpoint-4")});
  EXPECT_EQ(dir.entries(), (std::vector<std::string>{"checkpoint-2", "checkpoint-4", "checkpoint-5"}));
}

TEST(OutputDirSafety, ResumedFromAnotherDirectoryKeepsAndLoadsThisRunsBest) {
  TempDir root;
  fs::create_directories(root.file("a"));
  fs::create_directories(root.file("b"));
  {
    WorkingDirectory cwd(root.file("a"));
    TrainingArguments args = best_at_first_step("run", 2);  // relative to a/
    args.save_total_limit = 1;
    Trainer(toy_model(1), args, toy_dataset(64), toy_dataset(16, 8), {}, quiet()).train();
  }
  EXPECT_EQ(read_trainer_state(root.file("a/run/checkpoint-2"))["best_model_checkpoint"], "checkpoint-1");
  WorkingDirectory cwd(root.file("b"));
  // An unrelated run whose checkpoint-1 sits where a working-directory-relative
  // reference would point from here.
  Trainer(toy_model(2), best_at_first_step("run", 1), toy_dataset(64), toy_dataset(16, 8), {}, quiet()).train();
  ASSERT_TRUE(fs::exists(root.file("b/run/checkpoint-1")));

  TrainingArguments args = best_at_first_step(root.file("a/run"), 4);
  args.save_total_limit = 1;
  args.resume_from_checkpoint = "latest";
  auto model = toy_model(3);
  TrainOutput out = Trainer(model, args, toy_dataset(64), toy_dataset(16, 8), {}, quiet()).train();
  std::vector<std::string> kept;
  for (const auto& [step, path] : list_checkpoints(root.file("a/run"))) kept.push_back(fs::path(path).filename());
  EXPECT_EQ(kept, (std::vector<std::string>{"checkpoint-1", "checkpoint-4"}));
  EXPECT_EQ(out.best_checkpoint, root.file("a/run/checkpoint-1"));
  EXPECT_EQ(weights(*model), weights(root.file("a/run/checkpoint-1")));
  EXPECT_NE(weights(*model), weights(root.file("b/run/checkpoint-1")));
}

TEST(OutputDirSafety, RefusesToLoadABestCheckpointOfAnotherRun) {
  TempDir dir;
  Trainer(toy_model(1), best_at_first_step(dir.file("run"), 2), toy_dataset(64), toy_dataset(16, 8), {}, quiet())
      .train();
  Trainer(toy_model(2), best_at_first_step(dir.file("other"), 1), toy_dataset(64), toy_dataset(16, 8), {}, quiet())
      .train();
  // Another run's checkpoint-1 now stands where this run's best was.
  fs::remove_all(dir.file("run/checkpoint-1"));
  fs::copy(dir.file("other/checkpoint-1"), dir.file("run/checkpoint-1"), fs::copy_options::recursive);

  TrainingArguments args = best_at_first_step(dir.file("run"), 3);
  args.resume_from_checkpoint = "latest";
  Trainer t(toy_model(3), args, toy_dataset(64), toy_dataset(16, 8), {}, quiet());
  try {
    t.train();
    FAIL() << "loaded another run's checkpoint as the best model";
  } catch (const ValueError& e) {
    EXPECT_NE(std::string(e.what()).find("is not this run's"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace hearth::train

namespace hearth::train {
namespace {

TEST(OutputDirLock, ASecondRunFailsAtOnceNamingTheHolderAndDeletesNothing) {
  TempDir dir;
  TrainingArguments args = toy_args(dir.file("run"));
  args.max_steps = 2;
  args.save_strategy = "steps";
  args.save_steps = 1;
  args.report_to = {"jsonl"};
  Trainer(toy_model(1), args, toy_dataset(64), nullptr, {}, quiet()).train();
  ASSERT_EQ(list_checkpoints(dir.file("run")).size(), 2u);
  const std::string metrics_before = [&] {
    std::ifstream in(dir.file("run/metrics.jsonl"));
    return std::string(std::istreambuf_iterator<char>(in), {});
  }();

  OutputDirLock first(dir.file("run"));  // the run that is still going
  ASSERT_TRUE(first.held()) << first.reason();
  for (bool overwrite : {true, false}) {
    TrainingArguments second = args;
    second.overwrite_output_dir = overwrite;
    if (!overwrite) second.resume_from_checkpoint = "latest";
    Trainer t(toy_model(2), second, toy_dataset(64), nullptr, {}, quiet());
    try {
      t.train();
      FAIL() << "a second run shared the output directory";
    } catch (const ValueError& e) {
      const std::string what = e.what();
      EXPECT_NE(what.find("is in use by another run (pid " + std::to_string(::getpid()) + " host "), std::string::npos)
          << what;
    }
    EXPECT_EQ(list_checkpoints(dir.file("run")).size(), 2u);
    std::ifstream in(dir.file("run/metrics.jsonl"));
    EXPECT_EQ(std::string(std::istreambuf_iterator<char>(in), {}), metrics_before);
  }
}

TEST(OutputDirLock, IsReleasedWhenTheRunEnds) {
  TempDir dir;
  { OutputDirLock a(dir.path()); }
  OutputDirLock b(dir.path());
  EXPECT_TRUE(b.held());
  std::ifstream in(dir.file(kOutputDirLockFile));
  std::string line;
  std::getline(in, line);
  EXPECT_EQ(line.rfind("pid " + std::to_string(::getpid()) + " host ", 0), 0u) << line;
}

}  // namespace
}  // namespace hearth::train

namespace hearth::train {
namespace {

TEST(CheckpointRotation, ADeleteCutShortLeavesNoPartialCheckpointAndTheRunGoesOn) {
  TempDir dir;
  TrainingArguments args = toy_args(dir.file("run"));
  args.max_steps = 3;
  args.save_strategy = "steps";
  args.save_steps = 1;
  args.save_total_limit = 1;
  {
    hearth::testing::ScopedEnv fail("HEARTH_TEST_FAIL_REMOVE", "1");
    TrainOutput out = Trainer(toy_model(1), args, toy_dataset(64), nullptr, {}, quiet()).train();  // no throw
    EXPECT_EQ(out.global_step, 3);
  }
  // The deletes stopped part way, under names no scan takes for a checkpoint.
  std::vector<std::string> entries;
  for (const auto& e : fs::directory_iterator(dir.file("run")))
    if (e.path().filename().string().rfind("checkpoint-", 0) == 0) entries.push_back(e.path().filename());
  std::sort(entries.begin(), entries.end());
  EXPECT_EQ(entries, (std::vector<std::string>{"checkpoint-1.deleting", "checkpoint-2.deleting", "checkpoint-3"}));
  EXPECT_EQ(latest_checkpoint(dir.file("run")), dir.file("run/checkpoint-3"));

  // The next start clears them and resumes from the newest complete one.
  args.max_steps = 4;
  args.resume_from_checkpoint = "latest";
  TrainOutput out = Trainer(toy_model(2), args, toy_dataset(64), nullptr, {}, quiet()).train();
  EXPECT_EQ(out.global_step, 4);
  entries.clear();
  for (const auto& e : fs::directory_iterator(dir.file("run")))
    if (e.path().filename().string().rfind("checkpoint-", 0) == 0) entries.push_back(e.path().filename());
  EXPECT_EQ(entries, (std::vector<std::string>{"checkpoint-4"}));
}

TEST(CheckpointRotation, ALeftoverDeletingTreeIsNeverTheLatestAndIsRemoved) {
  TempDir dir;
  fs::create_directories(dir.file("checkpoint-3"));
  fs::create_directories(dir.file("checkpoint-7.deleting"));
  dir.write("checkpoint-7.deleting/trainer_state.json", "{}");
  EXPECT_EQ(latest_checkpoint(dir.path()), dir.file("checkpoint-3"));
  EXPECT_EQ(remove_unfinished_checkpoints(dir.path()), (std::vector<std::string>{dir.file("checkpoint-7.deleting")}));
  EXPECT_EQ(dir.entries(), (std::vector<std::string>{"checkpoint-3"}));
}

// A removal cut short is said to be one, not an unfinished save.
TEST(CheckpointRotation, ALeftoverDeletingTreeIsDescribedAsARemovalNotASave) {
  TempDir dir;
  fs::create_directories(dir.file("run/checkpoint-7.deleting"));
  fs::create_directories(dir.file("run/checkpoint-9.tmp-abcdef"));
  TrainingArguments args = toy_args(dir.file("run"));
  args.max_steps = 1;
  std::ostringstream console;
  TrainerOptions opts = quiet();
  opts.console = &console;
  Trainer(toy_model(1), args, toy_dataset(64), nullptr, {}, opts).train();
  EXPECT_NE(console.str().find("removed " + dir.file("run/checkpoint-7.deleting") +
                               " (an old checkpoint whose removal did not finish)"),
            std::string::npos)
      << console.str();
  EXPECT_NE(console.str().find("removed " + dir.file("run/checkpoint-9.tmp-abcdef") +
                               " (a checkpoint save that did not finish)"),
            std::string::npos)
      << console.str();
}

}  // namespace
}  // namespace hearth::train

namespace hearth::train {
namespace {

// A short run that writes what a training command writes: checkpoints, the
// metrics log, the curves, then the final model, its arguments and state.
void short_run_writing_everything(const std::string& output_dir) {
  TrainingArguments args = toy_args(output_dir);
  args.max_steps = 4;
  args.save_strategy = "steps";
  args.save_steps = 2;
  args.report_to = {"jsonl"};
  auto model = toy_model(1);
  Trainer t(model, args, toy_dataset(64), nullptr, {}, quiet());
  t.train();
  io::save_safetensors((fs::path(output_dir) / kModelFile).string(), model->state_dict());
  args.save((fs::path(output_dir) / kTrainingArgsFile).string());
  t.save_state();
}

// Every name such a run writes in output_dir, and each one's temporary
// "<name>.tmp": a symlink to a file outside planted at each changes nothing
// outside, and the run still writes its files.
TEST(OutputDirSymlinks, ASymlinkAtEveryNameARunWritesChangesNothingOutside) {
  TempDir dir;
  short_run_writing_everything(dir.file("probe"));
  std::vector<std::string> names;
  for (const auto& e : fs::directory_iterator(dir.file("probe")))
    if (e.is_regular_file()) names.push_back(e.path().filename().string());
  ASSERT_GE(names.size(), 5u);  // metrics.jsonl, curves.svg, model, arguments, state (and the lock)

  fs::create_directories(dir.file("outside"));
  fs::create_directories(dir.file("run"));
  std::vector<std::string> planted;
  for (const std::string& name : names) {
    for (const std::string& at : {name, name + ".tmp"}) {
      const std::string target = dir.write("outside/" + at, "precious " + at);
      fs::create_symlink(target, dir.file("run/" + at));
      planted.push_back(at);
    }
  }
  // Logs refuse the links with a warning; every other file replaces its link.
  ::testing::internal::CaptureStderr();
  short_run_writing_everything(dir.file("run"));
  ::testing::internal::GetCapturedStderr();
  EXPECT_FALSE(fs::is_symlink(dir.file("run/") + kModelFile));
  EXPECT_TRUE(fs::exists(dir.file("run/checkpoint-4/") + kModelFile));
  for (const std::string& at : planted) {
    std::ifstream in(dir.file("outside/" + at));
    EXPECT_EQ(std::string(std::istreambuf_iterator<char>(in), {}), "precious " + at) << at;
  }
  size_t outside = 0;
  for ([[maybe_unused]] const auto& e : fs::directory_iterator(dir.file("outside"))) ++outside;
  EXPECT_EQ(outside, planted.size());
}

// A log that cannot be written is given up with a warning; training goes on.
TEST(OutputDirSymlinks, MetricsAreNeverWrittenThroughASymlinkAndTrainingGoesOn) {
  TempDir dir;
  dir.write("victim", "precious\n");
  fs::create_directories(dir.file("run"));
  fs::create_symlink(dir.file("victim"), dir.file("run/metrics.jsonl"));
  TrainingArguments args = toy_args(dir.file("run"));
  args.max_steps = 2;
  args.report_to = {"jsonl"};
  Trainer t(toy_model(1), args, toy_dataset(64), nullptr, {}, quiet());
  ::testing::internal::CaptureStderr();
  TrainOutput out = t.train();
  const std::string warnings = ::testing::internal::GetCapturedStderr();
  EXPECT_EQ(out.global_step, 2);
  EXPECT_NE(warnings.find("hearth: warning: the metrics log stopped: "), std::string::npos) << warnings;
  EXPECT_NE(warnings.find("is a symbolic link"), std::string::npos) << warnings;
  std::ifstream in(dir.file("victim"));
  EXPECT_EQ(std::string(std::istreambuf_iterator<char>(in), {}), "precious\n");
}

TEST(OutputDirSymlinks, TensorBoardRefusesARunsDirectoryThatIsASymlinkAndTrainingGoesOn) {
  TempDir dir;
  fs::create_directories(dir.file("elsewhere"));
  fs::create_directories(dir.file("run"));
  fs::create_symlink(dir.file("elsewhere"), dir.file("run/runs"));
  TrainingArguments args = toy_args(dir.file("run"));
  args.max_steps = 1;
  args.report_to = {"tensorboard"};
  ::testing::internal::CaptureStderr();
  TrainOutput out = Trainer(toy_model(1), args, toy_dataset(64), nullptr, {}, quiet()).train();
  const std::string warnings = ::testing::internal::GetCapturedStderr();
  EXPECT_EQ(out.global_step, 1);
  EXPECT_NE(warnings.find("hearth: warning: TensorBoard logging stopped: "), std::string::npos) << warnings;
  EXPECT_TRUE(fs::is_empty(dir.file("elsewhere")));
}

// A FIFO at metrics.jsonl blocked the run at its start (and SIGTERM could
// not stop it): now the log is given up at once.
TEST(OutputDirFifos, AFifoAtTheMetricsLogNeverBlocksTheRun) {
  TempDir dir;
  fs::create_directories(dir.file("run"));
  const std::string fifo = dir.file("run/metrics.jsonl");
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  TrainingArguments args = toy_args(dir.file("run"));
  args.max_steps = 2;
  args.report_to = {"jsonl"};
  int64_t steps = 0;
  ::testing::internal::CaptureStderr();
  EXPECT_TRUE(hearth::testing::returns_without_blocking(
      fifo, [&] { steps = Trainer(toy_model(1), args, toy_dataset(64), nullptr, {}, quiet()).train().global_step; }));
  const std::string warnings = ::testing::internal::GetCapturedStderr();
  EXPECT_EQ(steps, 2);
  EXPECT_NE(warnings.find("FIFO"), std::string::npos) << warnings;
}

// Writes beyond a file-size limit fail (EFBIG) as writes on a full disk fail
// (ENOSPC): the metrics log outgrows the limit part way through the run and
// is given up with a warning; the run trains to its last step, and once
// there is room again its checkpoint saves.
TEST(OutputDirFullDisk, ALogThatCannotBeWrittenNeverStopsTraining) {
  TempDir dir;
  TrainingArguments args = toy_args(dir.file("run"));
  args.max_steps = 60;
  args.num_train_epochs = 100;
  args.report_to = {"jsonl"};
  Trainer t(toy_model(1), args, toy_dataset(64), nullptr, {}, quiet());
  struct rlimit before {};
  ASSERT_EQ(::getrlimit(RLIMIT_FSIZE, &before), 0);
  void (*previous)(int) = std::signal(SIGXFSZ, SIG_IGN);
  struct rlimit small = before;
  small.rlim_cur = 4096;
  ASSERT_EQ(::setrlimit(RLIMIT_FSIZE, &small), 0);
  ::testing::internal::CaptureStderr();
  TrainOutput out;
  try {
    out = t.train();
  } catch (...) {
    ::setrlimit(RLIMIT_FSIZE, &before);
    std::signal(SIGXFSZ, previous);
    ::testing::internal::GetCapturedStderr();
    throw;
  }
  ::setrlimit(RLIMIT_FSIZE, &before);
  std::signal(SIGXFSZ, previous);
  const std::string warnings = ::testing::internal::GetCapturedStderr();
  EXPECT_EQ(out.global_step, 60);
  EXPECT_NE(warnings.find("hearth: warning: the metrics log stopped: "), std::string::npos) << warnings;
  EXPECT_NE(warnings.find("File too large"), std::string::npos) << warnings;
  EXPECT_LE(fs::file_size(dir.file("run/metrics.jsonl")), 4096u);
  EXPECT_EQ(t.save_checkpoint(), dir.file("run/checkpoint-60"));
  EXPECT_TRUE(fs::exists(dir.file("run/checkpoint-60/model.safetensors")));
}

// A symlink loop anywhere in output_dir (ln -s loop o/loop) is not a
// checkpoint: training, listing and resuming skip it.
TEST(OutputDirSymlinks, ASymlinkLoopInOutputDirIsSkipped) {
  TempDir dir;
  fs::create_directories(dir.file("run"));
  fs::create_symlink("loop", dir.file("run/loop"));
  fs::create_symlink("checkpoint-99", dir.file("run/checkpoint-99"));
  TrainingArguments args = toy_args(dir.file("run"));
  args.max_steps = 2;
  args.save_strategy = "steps";
  args.save_steps = 2;
  Trainer(toy_model(1), args, toy_dataset(64), nullptr, {}, quiet()).train();
  ASSERT_EQ(latest_checkpoint(dir.file("run")), dir.file("run/checkpoint-2"));
  args.max_steps = 4;
  args.resume_from_checkpoint = "latest";
  TrainOutput out = Trainer(toy_model(1), args, toy_dataset(64), nullptr, {}, quiet()).train();
  EXPECT_EQ(out.global_step, 4);
}

TEST(OutputDirSymlinks, LogFilesRefuseSymlinksAndWriteRegularFiles) {
  TempDir dir;
  dir.write("victim", "precious");
  fs::create_symlink(dir.file("victim"), dir.file("events.out.tfevents.1.host.1.0"));
  io::LogFile f;
  EXPECT_THROW(f.open(dir.file("events.out.tfevents.1.host.1.0"), /*truncate=*/true), IoError);
  f.open(dir.file("log"), /*truncate=*/true);
  f.write("a\n");
  f.close();
  f.open(dir.file("log"), /*truncate=*/false);
  f.write("b\n");
  f.close();
  std::ifstream victim(dir.file("victim")), log(dir.file("log"));
  EXPECT_EQ(std::string(std::istreambuf_iterator<char>(victim), {}), "precious");
  EXPECT_EQ(std::string(std::istreambuf_iterator<char>(log), {}), "a\nb\n");
}

}  // namespace
}  // namespace hearth::train
