#include <algorithm>
#include <cstdlib>
#include <sstream>

#include <gtest/gtest.h>

#include "hearth/train/progress.h"

namespace hearth::train {
namespace {

TEST(Progress, FormatsDurations) {
  EXPECT_EQ(format_duration(0), "00:00");
  EXPECT_EQ(format_duration(75.4), "01:15");
  EXPECT_EQ(format_duration(3 * 3600 + 62), "3:01:02");
  EXPECT_EQ(format_duration(-1), "?");
  EXPECT_EQ(format_duration(1.0 / 0.0), "?");
}

TEST(Progress, FormatsLogEntriesKnownKeysFirst) {
  nlohmann::json train = {
      {"loss", 0.41234}, {"learning_rate", 8.06e-4}, {"grad_norm", 1.5}, {"epoch", 0.53}, {"step", 500}};
  EXPECT_EQ(format_log_entry(train, 4690), "step 500/4690 | epoch 0.53 | loss 0.4123 | lr 8.060e-04 | grad_norm 1.500");
  nlohmann::json eval = {{"eval_loss", 0.3312},   {"eval_accuracy", 0.88011},
                         {"eval_runtime", 12.34}, {"eval_samples_per_second", 810.2},
                         {"epoch", 1.0},          {"step", 938}};
  EXPECT_EQ(format_log_entry(eval, 4690),
            "eval at step 938 | epoch 1.00 | eval_loss 0.3312 | accuracy 0.8801 | eval time 12.3 s | "
            "eval_samples_per_second 810.2");
}

TEST(Progress, PlainModePrintsOneLinePerLogAndNoBar) {
  std::ostringstream out;
  ProgressCallback cb(out, /*bar=*/false);
  TrainingArguments args;
  TrainerState state;
  TrainerControl control;
  state.max_steps = 10;
  state.train_batch_size = 4;
  cb.on_train_begin(args, state, control);
  state.global_step = 5;
  cb.on_step_end(args, state, control);
  EXPECT_EQ(out.str(), "");
  cb.on_log(args, state, control, {{"loss", 1.0}, {"epoch", 0.5}, {"step", 5}});
  cb.on_log(args, state, control, {{"train_runtime", 3.0}, {"step", 5}});  // the caller prints the summary
  cb.on_train_end(args, state, control);
  std::string s = out.str();
  EXPECT_EQ(s.rfind("step 5/10 | epoch 0.50 | loss 1.0000 | ", 0), 0u) << s;
  EXPECT_NE(s.find(" samples/s | ETA "), std::string::npos) << s;
  EXPECT_EQ(std::count(s.begin(), s.end(), '\n'), 1);
  EXPECT_EQ(s.find('\r'), std::string::npos);
  EXPECT_EQ(s.find('\033'), std::string::npos);
}

// Not a terminal: a plain line whenever the interval passed without one,
// so a run under nohup, Slurm or tee is never silent until its first log.
TEST(Progress, PlainModePrintsAProgressLineWhenTheIntervalPassed) {
  TrainingArguments args;
  TrainerState state;
  TrainerControl control;
  state.max_steps = 10;
  state.train_batch_size = 4;
  std::ostringstream every_step;
  ProgressCallback eager(every_step, /*bar=*/false, /*plain_line_seconds=*/0.0);
  eager.on_train_begin(args, state, control);
  for (int i = 1; i <= 3; ++i) {
    state.global_step = i;
    state.epoch = i / 10.0;
    eager.on_step_end(args, state, control);
  }
  const std::string s = every_step.str();
  EXPECT_EQ(std::count(s.begin(), s.end(), '\n'), 3) << s;
  EXPECT_EQ(s.rfind("step 1/10 | epoch 0.10 | loss - | ", 0), 0u) << s;
  EXPECT_NE(s.find("step 3/10 | epoch 0.30"), std::string::npos) << s;
  EXPECT_NE(s.find(" samples/s | elapsed "), std::string::npos) << s;
  EXPECT_EQ(s.find('\r'), std::string::npos);
  // The default interval: nothing within a few steps of the start.
  EXPECT_EQ(ProgressCallback::kPlainLineSeconds, 30.0);
  std::ostringstream quiet;
  ProgressCallback patient(quiet, /*bar=*/false);
  patient.on_train_begin(args, state, control);
  patient.on_step_end(args, state, control);
  EXPECT_EQ(quiet.str(), "");
}

TEST(Progress, NoBarForDisableTqdmDumbTerminalsOrRedirectedOutput) {
  EXPECT_FALSE(progress_bar_by_default(/*disable_tqdm=*/true));
  const char* term = std::getenv("TERM");
  std::string saved = term ? term : "";
  ::setenv("TERM", "dumb", 1);
  EXPECT_FALSE(progress_bar_by_default(false));
  if (term) {
    ::setenv("TERM", saved.c_str(), 1);
  } else {
    ::unsetenv("TERM");
  }
  if (!stdout_is_terminal()) {
    EXPECT_FALSE(progress_bar_by_default(false));
  }
}

TEST(Progress, BarModeRedrawsInPlaceAndEndsItsLine) {
  std::ostringstream out;
  ProgressCallback cb(out, /*bar=*/true);
  TrainingArguments args;
  TrainerState state;
  TrainerControl control;
  state.max_steps = 4;
  state.train_batch_size = 2;
  cb.on_train_begin(args, state, control);
  for (int i = 1; i <= 4; ++i) {
    state.global_step = i;
    state.epoch = i / 4.0;
    cb.on_step_end(args, state, control);
  }
  cb.on_log(args, state, control, {{"loss", 0.25}, {"learning_rate", 1e-3}, {"epoch", 1.0}, {"step", 4}});
  cb.on_train_end(args, state, control);
  std::string s = out.str();
  EXPECT_NE(s.find("\r100%|"), std::string::npos) << s;
  EXPECT_NE(s.find("| 4/4 ["), std::string::npos) << s;
  EXPECT_NE(s.find("loss 0.2500 lr 1.00e-03"), std::string::npos) << s;
  EXPECT_NE(s.find("\r\033[Kstep 4/4"), std::string::npos) << s;  // the log line replaces the bar
  EXPECT_EQ(s.back(), '\n');
  cb.close();  // nothing left to close
  EXPECT_EQ(out.str(), s);
}

}  // namespace
}  // namespace hearth::train
