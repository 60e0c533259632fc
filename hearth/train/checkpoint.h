// Checkpoints laid out as Hugging Face's Trainer lays them out:
//
//   output_dir/checkpoint-<step>/
//     model.safetensors      the model's state_dict (PyTorch key names)
//     optimizer.safetensors  the optimizer's state tensors; its JSON state and
//                            the scheduler's in the metadata ("optimizer", "scheduler")
//     trainer_state.json     step, epoch, RNG, data position, best metric, log history
//     training_args.json     the TrainingArguments of the run (without resume_from_checkpoint)
//     scaler.json            the loss scaler's state (fp16-mixed runs only)
//     (and whatever extra files the caller writes, e.g. config.json)
//
// A checkpoint is built in a temporary directory and renamed into place
// (hearth/io/atomic_file.h), so checkpoint-<step> either does not exist or is
// complete: a crash or an exception mid-save leaves nothing that looks like one.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "hearth/nn/module.h"
#include "hearth/optim/grad_scaler.h"
#include "hearth/optim/lr_scheduler.h"
#include "hearth/optim/optimizer.h"
#include "hearth/train/training_arguments.h"

namespace hearth::train {

inline constexpr const char* kModelFile = "model.safetensors";
inline constexpr const char* kOptimizerFile = "optimizer.safetensors";
inline constexpr const char* kTrainerStateFile = "trainer_state.json";
inline constexpr const char* kTrainingArgsFile = "training_args.json";
inline constexpr const char* kGradScalerFile = "scaler.json";
// An old checkpoint being removed is first renamed to "<its name>.deleting".
inline constexpr const char* kDeletingSuffix = ".deleting";

// "checkpoint-<step>".
std::string checkpoint_name(int64_t step);

// How a model goes into a checkpoint and comes back. Unset (the default), the
// whole state dict as model.safetensors. A run that trains adapters alone
// saves those (PEFT's adapter_config.json and adapter_model.safetensors), as
// Hugging Face's Trainer does for a PEFT model: the frozen base is not
// written with every checkpoint.
struct ModelFiles {
  std::string main_file;  // the file a complete checkpoint holds ("adapter_model.safetensors")
  std::function<void(const nn::Module& model, const std::string& dir)> save;
  std::function<void(const std::string& dir, nn::Module& model)> load;
  bool is_set() const { return static_cast<bool>(save); }
};

struct CheckpointContents {
  const nn::Module* model = nullptr;            // required
  ModelFiles model_files;                       // unset: model.safetensors
  const optim::Optimizer* optimizer = nullptr;  // optional, with its scheduler
  const optim::LRScheduler* scheduler = nullptr;
  const optim::GradScaler* grad_scaler = nullptr;  // optional
  nlohmann::json trainer_state;                    // written when not null
  const TrainingArguments* args = nullptr;
  // Writes more files into the (temporary) checkpoint directory it is given.
  std::function<void(const std::string& dir)> extra_files;
};

// Writes the checkpoint at `dir` atomically (replacing one already there).
void save_checkpoint(const std::string& dir, const CheckpointContents& contents);

// Loads model.safetensors into `model` (strict: every key must match).
// IoError naming the file when it is missing or unreadable.
void load_model_weights(const std::string& dir, nn::Module& model);
// The same through `files` when it is set.
void load_model_weights(const std::string& dir, nn::Module& model, const ModelFiles& files);
// Restores the optimizer and, when given, the scheduler from optimizer.safetensors.
void load_optimizer_state(const std::string& dir, optim::Optimizer& optimizer, optim::LRScheduler* scheduler);
// Whether the checkpoint holds a loss scaler's state, and restoring it
// (IoError naming the file when unreadable, ValueError when a field is bad).
bool has_grad_scaler_state(const std::string& dir);
void load_grad_scaler_state(const std::string& dir, optim::GradScaler& scaler);
// The parsed trainer_state.json.
nlohmann::json read_trainer_state(const std::string& dir);

// The checkpoint-<step> directories in `output_dir`, by increasing step
// (temporary directories of unfinished saves are not listed).
std::vector<std::pair<int64_t, std::string>> list_checkpoints(const std::string& output_dir);
// Removes what saves cut short by a crash or a kill left in `output_dir`: the
// temporary trees "checkpoint-<step>.tmp-XXXXXX", the set-aside old trees
// "checkpoint-<step>.old-XXXXXX" and the rotated trees whose removal did not
// finish, "checkpoint-<step>.deleting" (never a complete checkpoint-<step>).
// Returns the paths removed.
std::vector<std::string> remove_unfinished_checkpoints(const std::string& output_dir);
// Removes a checkpoint directory without ever leaving part of it under its
// own name: renamed to "<dir>.deleting" first (one atomic step), then deleted.
// Returns what went wrong ("" when it is gone); never throws for a filesystem error.
std::string remove_checkpoint(const std::string& dir);
// The newest one, if any.
std::optional<std::string> latest_checkpoint(const std::string& output_dir);
// What resume_from_checkpoint names: "latest" (the newest in output_dir) or a
// directory, which must hold a complete checkpoint. ValueError saying what is
// there otherwise.
// `model_file`: the file that holds the model in a complete checkpoint
// (ModelFiles::main_file when the run saves its model otherwise).
std::string resolve_checkpoint(const std::string& spec, const std::string& output_dir,
                               const std::string& model_file = kModelFile);

// Deletes the oldest checkpoints so that at most `limit` remain, never
// deleting `keep` (the best model's checkpoint; may be empty), which counts as
// one of them. With limit 1 and a best that is not the newest, both stay: the
// newest is what a resumed run continues from. Returns the directories deleted.
std::vector<std::string> rotate_checkpoints(const std::string& output_dir, int64_t limit, const std::string& keep);
// The same, never deleting any of `keep` (e.g. the best checkpoint and the one
// just saved) nor the newest; when those are more than `limit`, they all stay.
// Each checkpoint is renamed to checkpoint-<step>.deleting before its files
// are removed, so that none is ever left half deleted under its own name; a
// filesystem error is not thrown but added to `problems` (when given), and
// the checkpoint it concerns is not in the result.
std::vector<std::string> rotate_checkpoints(const std::string& output_dir, int64_t limit,
                                            const std::vector<std::string>& keep,
                                            std::vector<std::string>* problems = nullptr);

// How trainer_state.json names a checkpoint of the run (best_model_checkpoint):
// relative to output_dir ("checkpoint-<step>"), so that the reference survives
// moving the folder or resuming from another working directory. Older files
// hold a path (absolute, or relative to the working directory of the run that
// wrote it); a checkpoint always lives directly in output_dir, so such a path
// is read as its last component when that is a checkpoint-<step> name.
std::string checkpoint_reference(const std::string& stored);
// The directory a reference names: output_dir/<reference> for a name, the
// path itself for anything else (an absolute path that is not a checkpoint's).
std::string resolve_checkpoint_reference(const std::string& output_dir, const std::string& reference);

}  // namespace hearth::train
