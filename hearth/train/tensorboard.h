// report_to "tensorboard": the Trainer's logs as TensorBoard scalars, in event
// files under output_dir/runs/<date>_<host>/ (Hugging Face's logging_dir), so
// `tensorboard --logdir output_dir/runs` shows them. Tags follow Hugging Face:
// "train/loss", "train/learning_rate", "train/grad_norm", "train/epoch",
// "eval/loss", "eval/accuracy", ...; besides, at each training log,
// "train/samples_per_second" since the previous one and the device's memory
// ("train/memory_allocated_gib", "train/memory_peak_gib") when its allocator
// counts it.
#pragma once

#include <memory>
#include <optional>
#include <string>

#include "hearth/core/device.h"
#include "hearth/train/callbacks.h"
#include "hearth/train/log_failure.h"
#include "hearth/train/tensorboard_events.h"

namespace hearth::train {

class TensorBoardCallback : public TrainerCallback {
 public:
  // `log_dir`: the run's directory (default_tensorboard_dir(output_dir) for the Trainer).
  TensorBoardCallback(std::string log_dir, Device device);
  std::string name() const override { return "TensorBoardCallback"; }
  // Empty until training begins.
  std::string event_file() const { return writer_ ? writer_->path() : std::string(); }

  void on_train_begin(const TrainingArguments& args, TrainerState& state, TrainerControl& control) override;
  void on_log(const TrainingArguments& args, TrainerState& state, TrainerControl& control,
              const nlohmann::json& entry) override;

 private:
  void write_scalars(const TrainingArguments& args, TrainerState& state, TrainerControl& control,
                     const nlohmann::json& entry);
  std::string log_dir_;
  Device device_;
  std::unique_ptr<EventFileWriter> writer_;
  std::optional<std::pair<int64_t, double>> last_train_log_;  // (step, seconds) of the previous loss log
  LogFailure failure_{"TensorBoard logging"};
};

// output_dir/runs/<Mon><DD>_<HH>-<MM>-<SS>_<host>, as Hugging Face names it.
// IoError when output_dir/runs is a symlink: event files are never written
// through one planted in the output folder.
std::string default_tensorboard_dir(const std::string& output_dir);

}  // namespace hearth::train
