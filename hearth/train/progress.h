// The console side of training: on a terminal a progress bar redrawn in place
// (steps, epoch, loss, learning rate, samples/s, ETA), elsewhere (a log file,
// a pipe, nohup, Slurm, CI) plain lines at each logging step and, between
// them, a plain progress line at least every 30 seconds, as tqdm prints when
// its output is not a terminal, so that a long run is never silent.
#pragma once

#include <chrono>
#include <iosfwd>
#include <string>

#include "hearth/train/callbacks.h"

namespace hearth::train {

class ProgressCallback : public TrainerCallback {
 public:
  // The longest a plain run goes without a line.
  static constexpr double kPlainLineSeconds = 30.0;
  // bar: redraw a bar in place (for terminals); otherwise print a line per
  // log, and a progress line when plain_line_seconds have passed without one.
  ProgressCallback(std::ostream& out, bool bar, double plain_line_seconds = kPlainLineSeconds);
  std::string name() const override { return "ProgressCallback"; }

  void on_train_begin(const TrainingArguments& args, TrainerState& state, TrainerControl& control) override;
  void on_step_end(const TrainingArguments& args, TrainerState& state, TrainerControl& control) override;
  void on_log(const TrainingArguments& args, TrainerState& state, TrainerControl& control,
              const nlohmann::json& entry) override;
  void on_train_end(const TrainingArguments& args, TrainerState& state, TrainerControl& control) override;
  // Ends a bar's line so that what is printed next starts on its own line.
  void close();

 private:
  using Clock = std::chrono::steady_clock;
  double elapsed() const;
  double samples_per_second(const TrainerState& state) const;
  std::string eta(const TrainerState& state) const;
  void draw_bar(const TrainerState& state);
  void print_progress_line(const TrainerState& state);
  void clear_bar();

  std::ostream& out_;
  bool bar_;
  bool bar_drawn_ = false;
  Clock::time_point start_;
  Clock::time_point last_draw_;
  double plain_line_seconds_;
  Clock::time_point last_line_;  // the last plain line printed
  int64_t start_step_ = 0;
  std::string last_loss_ = "-";
  std::string last_lr_ = "-";
};

// Whether stdout is a terminal.
bool stdout_is_terminal();
// The Trainer's default for the bar: stdout is a terminal that can redraw a
// line (TERM is not "dumb") and disable_tqdm is off. Elsewhere (a log file, a
// pipe, CI) the output is plain lines without control characters. hearth
// prints no colours, so NO_COLOR needs nothing further.
bool progress_bar_by_default(bool disable_tqdm);
// "1:02:03" for an hour or more, else "02:03"; "?" for negative or non-finite.
std::string format_duration(double seconds);
// A one-line rendering of a log entry: "step 500/4690 | epoch 0.53 | loss 0.4123 | ...".
std::string format_log_entry(const nlohmann::json& entry, int64_t max_steps);

}  // namespace hearth::train
