// output_dir/metrics.jsonl: every log entry (training losses, evaluations, the
// final summary) as one JSON object per line, flushed as it is written, so a
// run can be plotted while it trains and read after it crashed. A log that
// cannot be written is given up with a warning (log_failure.h).
#pragma once

#include <fstream>
#include <string>

#include "hearth/io/log_file.h"
#include "hearth/train/callbacks.h"
#include "hearth/train/log_failure.h"

namespace hearth::train {

class MetricsJsonlCallback : public TrainerCallback {
 public:
  explicit MetricsJsonlCallback(std::string path);
  std::string name() const override { return "MetricsJsonlCallback"; }
  const std::string& path() const { return path_; }

  // A fresh run starts an empty file. A resumed run rewrites it from the
  // checkpoint's log history, dropping lines an interrupted run logged after
  // that checkpoint, so the file reads as if the run had never stopped.
  void on_train_begin(const TrainingArguments& args, TrainerState& state, TrainerControl& control) override;
  void on_log(const TrainingArguments& args, TrainerState& state, TrainerControl& control,
              const nlohmann::json& entry) override;

 private:
  void open(bool truncate);
  void write(const nlohmann::json& entry);
  std::string path_;
  io::LogFile out_;  // O_NOFOLLOW: never through a symlink planted in output_dir
  LogFailure failure_{"the metrics log"};
};

}  // namespace hearth::train
