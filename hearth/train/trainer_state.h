// What the Trainer knows about a run (TrainerState) and what callbacks ask of it
// (TrainerControl), after Hugging Face's classes of the same names. The state
// is saved in every checkpoint as trainer_state.json, with what resuming needs
// to continue exactly: the RNG, the data position and the partial loss window.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "hearth/core/tensor.h"
#include "hearth/data/dataloader.h"

namespace hearth::train {

struct TrainerState {
  // Where to_json() keeps what resuming needs beyond Hugging Face's fields.
  static constexpr const char* kResumeStateKey = "HearthTrainer";

  int64_t global_step = 0;  // optimizer steps taken
  double epoch = 0.0;       // fractional: 1.5 is half way through the second epoch
  int64_t max_steps = 0;
  double num_train_epochs = 0.0;
  int64_t steps_per_epoch = 0;
  int64_t train_batch_size = 0;  // samples per optimizer step
  int64_t logging_steps = 0;
  int64_t eval_steps = 0;
  int64_t save_steps = 0;

  // Floating-point operations of the training so far, over all processes, as
  // Hugging Face estimates them: 6 x parameters x tokens (x samples for
  // inputs without token ids) for each forward and backward.
  double total_flos = 0.0;

  std::optional<double> best_metric;
  int64_t best_global_step = 0;       // the step best_metric was measured at
  // The checkpoint saved at that step, if any: relative to output_dir
  // ("checkpoint-<step>"; see checkpoint_reference in checkpoint.h).
  std::string best_model_checkpoint;
  // Identifies the run (kept across resumes): a checkpoint whose trainer_state
  // holds another one belongs to another run (absent in older files: empty).
  std::string run_id;
  // Every log entry so far (training losses, evaluations, the final summary).
  std::vector<nlohmann::json> log_history;

  // ---- resumption ----
  uint64_t rng_seed = 0;
  uint64_t rng_offset = 0;
  data::DataLoaderState data_position;
  // Data-parallel processes of the run: the data position means the same
  // thing only at the same number (absent in older files: 1).
  int64_t world_size = 1;
  // Losses of the steps since the last log (their mean is the next "loss").
  std::vector<double> loss_window;
  double total_loss = 0.0;  // sum of all logged steps' losses, for train_loss
  // Per-callback state ("EarlyStoppingCallback": {...}).
  nlohmann::json stateful_callbacks = nlohmann::json::object();

  // ---- not saved ----
  // The loss of the last optimizer step, on the training device and not yet
  // read (reading it synchronises; the Trainer does so only to log).
  Tensor step_loss;
  bool is_training = false;

  // trainer_state.json as transformers' TrainerState.load_from_json reads it
  // (its fields only, at the top level); hearth's resumption state goes in
  // stateful_callbacks under kResumeStateKey, a dictionary transformers
  // leaves as it is. from_json also reads older files, which had it at the top.
  nlohmann::json to_json() const;
  // ValueError naming `where` and the field when something is missing or of the wrong type.
  static TrainerState from_json(const nlohmann::json& j, const std::string& where);
};

// Requests from callbacks, read by the Trainer after each event.
struct TrainerControl {
  bool should_training_stop = false;
  bool should_evaluate = false;
  bool should_save = false;
  bool should_log = false;
  // Why training stopped early, for the summary ("early stopping: ...").
  std::string stop_reason;
};

}  // namespace hearth::train
