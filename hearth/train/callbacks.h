// Callbacks: code the Trainer calls at fixed points of the loop (Hugging Face's
// TrainerCallback). They observe the state, and steer the loop through
// TrainerControl (stop, evaluate, save). The console progress display and the
// metrics.jsonl writer are callbacks too (hearth/train/progress.h,
// hearth/train/metrics_log.h).
#pragma once

#include <map>
#include <memory>
#include <optional>
#include <string>

#include <nlohmann/json.hpp>

#include "hearth/train/trainer_state.h"
#include "hearth/train/training_arguments.h"

namespace hearth::train {

// Metrics by name ("eval_loss": 0.31, "eval_accuracy": 0.89).
using Metrics = std::map<std::string, double>;

class TrainerCallback {
 public:
  virtual ~TrainerCallback() = default;
  // A stable name: the key of this callback's saved state.
  virtual std::string name() const = 0;

  virtual void on_train_begin(const TrainingArguments&, TrainerState&, TrainerControl&) {}
  virtual void on_epoch_begin(const TrainingArguments&, TrainerState&, TrainerControl&) {}
  // After each optimizer step (global_step already counts it).
  virtual void on_step_end(const TrainingArguments&, TrainerState&, TrainerControl&) {}
  virtual void on_epoch_end(const TrainingArguments&, TrainerState&, TrainerControl&) {}
  virtual void on_evaluate(const TrainingArguments&, TrainerState&, TrainerControl&, const Metrics&) {}
  // `entry` is the line appended to log_history.
  virtual void on_log(const TrainingArguments&, TrainerState&, TrainerControl&, const nlohmann::json& entry) {}
  virtual void on_save(const TrainingArguments&, TrainerState&, TrainerControl&, const std::string& checkpoint) {}
  virtual void on_train_end(const TrainingArguments&, TrainerState&, TrainerControl&) {}

  // State a checkpoint keeps for this callback (null: none), and its restore.
  virtual nlohmann::json state_dict() const { return nullptr; }
  virtual void load_state_dict(const nlohmann::json&) {}
};

using CallbackPtr = std::shared_ptr<TrainerCallback>;

// Stops training when the metric that picks the best model
// (TrainingArguments::metric_for_best_model, "eval_loss" by default) has not
// improved by more than `threshold` for `patience` evaluations in a row.
// Needs eval_strategy "steps" or "epoch" (ValueError at on_train_begin otherwise).
class EarlyStoppingCallback : public TrainerCallback {
 public:
  explicit EarlyStoppingCallback(int64_t patience = 1, double threshold = 0.0);
  std::string name() const override { return "EarlyStoppingCallback"; }

  void on_train_begin(const TrainingArguments& args, TrainerState&, TrainerControl&) override;
  void on_evaluate(const TrainingArguments& args, TrainerState& state, TrainerControl& control,
                   const Metrics& metrics) override;
  nlohmann::json state_dict() const override;
  void load_state_dict(const nlohmann::json& state) override;

  int64_t patience_counter() const { return patience_counter_; }

 private:
  int64_t patience_;
  double threshold_;
  int64_t patience_counter_ = 0;
  std::optional<double> best_;
};

// The value of args' best-model metric in `metrics`; ValueError listing the
// metrics there are when it is missing.
double best_model_metric(const TrainingArguments& args, const Metrics& metrics);
// Whether `value` beats `best` (by more than `threshold`) in args' direction.
bool metric_improves(const TrainingArguments& args, double value, const std::optional<double>& best,
                     double threshold = 0.0);

}  // namespace hearth::train
