// Trainer's checkpoints: trainer_state.json on its own, and whole checkpoints
// (written by rank 0 while the other ranks wait, atomically, then rotated).
#include <filesystem>

#include "hearth/core/errors.h"
#include "hearth/core/generator.h"
#include "hearth/io/atomic_file.h"
#include "hearth/train/checkpoint.h"
#include "hearth/train/signals.h"
#include "hearth/train/trainer.h"

namespace hearth::train {

namespace fs = std::filesystem;
using json = nlohmann::json;

void Trainer::save_state() const {
  // Rank 0 writes the run's files; two ranks renaming into one path would collide.
  if (!is_main_process()) return;
  fs::create_directories(args_.output_dir);
  io::write_file_atomic((fs::path(args_.output_dir) / kTrainerStateFile).string(), state_.to_json().dump(2) + "\n");
}

std::string Trainer::save_checkpoint() {
  const std::string dir = (fs::path(args_.output_dir) / checkpoint_name(state_.global_step)).string();
  flush_loss_window();  // also refuses to save a run whose loss went non-finite
  state_.rng_seed = default_generator().seed();
  state_.rng_offset = default_generator().offset();
  if (loader_) state_.data_position = loader_->state();
  for (CallbackPtr& cb : callbacks_) {
    json s = cb->state_dict();
    if (!s.is_null()) state_.stateful_callbacks[cb->name()] = s;
  }
  const std::string previous_best = state_.best_model_checkpoint;
  if (state_.best_metric.has_value() && state_.best_global_step == state_.global_step)
    state_.best_model_checkpoint = checkpoint_name(state_.global_step);  // relative to output_dir
  state_.world_size = world_size();
  if (!is_main_process()) {
    // Rank 0 writes; the others wait below so that nobody reads a half-written checkpoint.
    last_save_step_ = state_.global_step;
    last_checkpoint_ = dir;
    StopSignalGuard::set_last_checkpoint(dir);
    group_->barrier()->wait();
    return dir;
  }
  CheckpointContents contents;
  contents.model = model_.get();
  contents.model_files = options_.model_files;
  // save_only_model: the model alone, which loads but cannot be resumed.
  contents.optimizer = args_.save_only_model ? nullptr : optimizer_.get();
  contents.scheduler = args_.save_only_model ? nullptr : scheduler_.get();
  contents.grad_scaler = args_.save_only_model ? nullptr : scaler_.get();
  contents.trainer_state = state_.to_json();
  contents.args = &args_;
  contents.extra_files = options_.checkpoint_extra_files;
  // A second Ctrl-C inside the save stops at once: its message names this
  // checkpoint as unfinished and the previous one as what to resume from.
  StopSignalGuard::begin_save(dir);
  try {
    train::save_checkpoint(dir, contents);
    StopSignalGuard::end_save();
  } catch (const IoError& e) {
    StopSignalGuard::end_save();
    save_failed_step_ = state_.global_step;
    // The save is atomic: nothing of it is left, and the checkpoints before it
    // are untouched. Say which one a resumed run would continue from.
    state_.best_model_checkpoint = previous_best;
    HEARTH_THROW(IoError, "[trainer] cannot save ", dir, ": ", e.what(), "; ",
                 last_checkpoint_.empty() ? std::string("no earlier checkpoint of this run exists")
                                          : "the previous checkpoint " + last_checkpoint_ +
                                                " is intact: free space or fix the directory, then resume with "
                                                "--resume_from_checkpoint latest");
  }
  last_save_step_ = state_.global_step;
  last_checkpoint_ = dir;
  StopSignalGuard::set_last_checkpoint(dir);
  if (args_.save_total_limit.has_value()) {
    std::vector<std::string> problems;
    rotate_checkpoints(args_.output_dir, *args_.save_total_limit, {best_checkpoint_dir(), dir}, &problems);
    for (const std::string& p : problems)
      say("hearth: warning: save_total_limit: cannot delete an old checkpoint: " + p);
  }
  for (CallbackPtr& cb : callbacks_) cb->on_save(args_, state_, control_, dir);
  if (group_) group_->barrier()->wait();
  return dir;
}

}  // namespace hearth::train
