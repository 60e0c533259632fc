// TrainingArguments: everything that shapes a training run, under the names
// Hugging Face's TrainingArguments uses, with its defaults, so a
// training_args.json written by either reads the same way to a person.
//
// The fields are also described by a table (training_argument_fields()), from
// which the JSON reader, the JSON writer and the `hearth train` flags are all
// generated, so the three can never disagree. Every value is checked as it is
// set; a bad one is a ValueError
//   "[trainer] <where>: field '<name>': expected <what is allowed>, got <value>"
// where <where> is the config file or the command-line flag it came from.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "hearth/core/dtype.h"

namespace hearth::train {

struct TrainingArguments {
  // Where checkpoints, metrics.jsonl and the final model go.
  std::string output_dir = "trainer_output";
  // Train anew into an output_dir that holds checkpoints, deleting them first.
  bool overwrite_output_dir = false;

  int64_t per_device_train_batch_size = 8;
  int64_t per_device_eval_batch_size = 8;
  // Samples per optimizer step = per_device_train_batch_size * gradient_accumulation_steps;
  // the loss is normalised so that this equals one large batch.
  int64_t gradient_accumulation_steps = 1;
  bool dataloader_drop_last = false;
  int64_t dataloader_num_workers = 0;
  // Batches each loader worker builds ahead (unset: 2, as PyTorch's DataLoader).
  std::optional<int64_t> dataloader_prefetch_factor;
  // Data parallelism: seconds a collective waits for the other processes
  // before failing (HEARTH_DIST_TIMEOUT, in seconds, overrides it).
  int64_t ddp_timeout = 1800;
  // Batches in page-locked memory when training on an accelerator (asynchronous copies).
  bool dataloader_pin_memory = true;

  // Optimizer: "adamw_torch" (AdamW; "adamw_torch_fused" is the same), "adam"
  // or "sgd" (momentum 0.9).
  std::string optim = "adamw_torch";
  double learning_rate = 5e-5;
  double weight_decay = 0.0;
  double adam_beta1 = 0.9;
  double adam_beta2 = 0.999;
  double adam_epsilon = 1e-8;
  // Clip the global gradient norm to this; 0 turns clipping off.
  double max_grad_norm = 1.0;
  // Cross-entropy against targets of 1 - eps + eps/C for the true class and
  // eps/C for the others (PyTorch's label_smoothing); 0: off. Applies to
  // classification losses computed from the logits and integer labels.
  double label_smoothing_factor = 0.0;

  // Length: max_steps (optimizer steps) when > 0, else num_train_epochs (may be fractional).
  double num_train_epochs = 3.0;
  int64_t max_steps = -1;
  // "linear", "cosine", "cosine_with_restarts" (one cycle, as Hugging Face's
  // default), "polynomial" (power 1 down to 1e-7), "constant", "constant_with_warmup".
  std::string lr_scheduler_type = "linear";
  // Warm-up length: warmup_steps when > 0, else warmup_ratio of the total steps.
  int64_t warmup_steps = 0;
  double warmup_ratio = 0.0;

  int64_t seed = 42;
  // Seed of the training data order alone; unset: seed.
  std::optional<int64_t> data_seed;
  // "steps" (every logging_steps), "epoch" or "no"; the last step is logged
  // whatever it says, so that the final loss is known.
  std::string logging_strategy = "steps";
  int64_t logging_steps = 500;
  // Also log the loss of the first step.
  bool logging_first_step = false;
  // Where TensorBoard's event files go; unset: output_dir/runs/.
  std::optional<std::string> logging_dir;
  // "no", "steps" (every eval_steps) or "epoch".
  std::string eval_strategy = "no";
  std::optional<int64_t> eval_steps;  // unset: logging_steps
  // Evaluate once before the first step (a check that evaluation works, and a baseline).
  bool eval_on_start = false;
  // "steps" (every save_steps), "epoch", "best" (after each evaluation that
  // finds a new best metric_for_best_model) or "no".
  std::string save_strategy = "steps";
  int64_t save_steps = 500;
  std::optional<int64_t> save_total_limit;  // unset: keep every checkpoint
  // Checkpoints hold the model (and trainer_state.json) without the
  // optimizer, scheduler and loss scaler: smaller, but they cannot be resumed.
  bool save_only_model = false;
  bool load_best_model_at_end = false;
  // A metric of evaluate(), with or without the "eval_" prefix; unset: "loss".
  std::optional<std::string> metric_for_best_model;
  // Unset: false for metrics ending in "loss", true otherwise.
  std::optional<bool> greater_is_better;
  // A checkpoint directory, or "latest" (the newest checkpoint-N in output_dir).
  std::optional<std::string> resume_from_checkpoint;

  // "auto" (the best accelerator present, else the CPU), "cpu", "cuda", "cuda:1"...
  std::string device = "auto";
  // Forces the CPU whatever `device` says.
  bool use_cpu = false;
  // "fp32", "bf16-mixed" (products in bfloat16 under autocast) or "fp16-mixed"
  // (products in float16, with dynamic loss scaling); the weights, the
  // optimizer and the loss stay float32 in all three. Lightning's spellings
  // ("32-true", "bf16", "16-mixed", "16") are read as these. Hugging Face's
  // boolean fields `bf16` and `fp16` are views of this one: setting bf16 true
  // sets precision to bf16-mixed, and the JSON holds all three.
  std::string precision = "fp32";
  // Plain periodic lines instead of a progress bar, even on a terminal.
  bool disable_tqdm = false;
  // Checks every op's outputs for NaN/Inf, forward and backward, and stops at
  // the first op that made one (hearth/autograd/anomaly_mode.h). Slow: for
  // finding the step that goes bad.
  bool detect_anomaly = false;
  // Where logs go besides the console: "jsonl" (output_dir/metrics.jsonl),
  // "tensorboard" (event files under output_dir/runs/), "all" (both), or "none".
  // Unless "none", training also ends by drawing output_dir/curves.svg.
  std::vector<std::string> report_to = {"all"};
  // On an OutOfMemoryError in a training step, halve the per-device batch and
  // retry the step, raising gradient accumulation so that each optimizer step
  // still sees the same samples.
  bool auto_find_batch_size = false;
  // Record each training step's forward and backward as a step graph (on
  // CUDA, a CUDA graph: DeviceRuntime::StepGraph) and replay it: one launch
  // instead of hundreds, the optimizer update eagerly after each replay.
  // Unset (the default): on wherever the device records step graphs, silently
  // off where it has none (the CPU), and where something else rules recording
  // out (fp16-mixed, data parallelism, gradient accumulation, ...) eager with
  // the reason said once. true: the same, but also says why on a device
  // without step graphs. false (--no_step_graphs): always eager. A batch of
  // other shapes than the recorded ones (an epoch's smaller last batch) runs
  // eagerly for that step. Also read as "cuda_graphs" (--cuda_graphs), its
  // former name. Evaluation's forward is recorded and replayed the same way
  // (trainer_evaluate.cpp), ruled out only by a device without step graphs,
  // detect_anomaly, or a forward its rehearsal refuses.
  std::optional<bool> step_graphs;
  // Activation checkpointing (Hugging Face's gradient_checkpointing): the
  // model's blocks keep only their inputs and recompute the rest in backward,
  // about a third more compute for much less activation memory (larger
  // batches). The model must have blocks that support it (BERT's layers).
  bool gradient_checkpointing = false;
  // Hugging Face's torch_compile: true also sets step_graphs to true, the
  // nearest thing hearth has.
  bool torch_compile = false;
  // Reduced-precision (TF32-class) products for float32 matrix products and
  // convolutions on an accelerator that has them; unset: the process's
  // setting (on unless HEARTH_ALLOW_TF32=0). Set, the Trainer sets the
  // backend options' float32 matmul precision to "high" (true) or "highest".
  std::optional<bool> tf32;
  // Hugging Face's fields that change nothing here (training_argument_fields()
  // says why for each), as given, so that a training_args.json written by
  // either reads back unchanged. Unset fields are absent.
  std::map<std::string, nlohmann::json> inert;

  // ---- derived values ----
  // The dtype autocast runs the products in: bfloat16, float16, or none for fp32.
  std::optional<DType> autocast_dtype() const;
  // fp16-mixed: float16 gradients underflow without loss scaling.
  bool uses_grad_scaler() const { return precision == "fp16-mixed"; }
  int64_t effective_eval_steps() const { return eval_steps.value_or(logging_steps); }
  // The metric name as evaluate() reports it ("eval_loss").
  std::string best_metric_key() const;
  bool best_metric_greater_is_better() const;
  // Whether evaluations track the best model (best_metric,
  // best_model_checkpoint): when metric_for_best_model is set,
  // load_best_model_at_end asks for the best, or save_strategy is "best".
  bool tracks_best_model() const {
    return metric_for_best_model.has_value() || load_best_model_at_end || save_strategy == "best";
  }
  bool writes_jsonl() const;
  bool writes_tensorboard() const;
  bool draws_curves() const;

  // Checks the combinations single fields cannot (load_best_model_at_end needs
  // matching eval and save strategies, ...). `where` prefixes the message.
  void validate(const std::string& where = "arguments") const;

  nlohmann::json to_json() const;
  // Starts from `base` (the defaults unless given) and sets each key of `j`
  // (an object). Unknown keys and bad values throw ValueError naming `where`
  // and the field.
  static TrainingArguments from_json(const nlohmann::json& j, const std::string& where, const TrainingArguments& base);
  static TrainingArguments from_json(const nlohmann::json& j, const std::string& where = "config");
  // Reads a JSON file over `base` (IoError when it cannot be read, ValueError
  // when it is not a JSON object or a field is bad), then validate()s.
  static TrainingArguments load(const std::string& path, const TrainingArguments& base);
  static TrainingArguments load(const std::string& path);
  // Writes to_json() atomically, pretty-printed.
  void save(const std::string& path) const;
};

// One field of TrainingArguments: how it reads, writes and describes itself.
struct TrainingArgumentField {
  enum class Kind { boolean, integer, number, string, string_list };
  std::string name;
  Kind kind;
  bool optional;     // may be null (unset)
  std::string help;  // one line, with what is allowed
  std::function<nlohmann::json(const TrainingArguments&)> get;
  // Throws ValueError "[trainer] <context>: expected ..., got ...", where
  // context names the source and the field ("a.json: field 'seed'", "--seed").
  std::function<void(TrainingArguments&, const nlohmann::json&, const std::string& context)> set;
  // Other names the field is read by (former names kept for old files and
  // command lines); to_json() writes `name` only.
  std::vector<std::string> aliases = {};
  // Empty when the field acts; else why it changes nothing here (no hub, no
  // DeepSpeed, ...). Values that would need what hearth lacks are refused by
  // `set`, with the reason.
  std::string no_effect = {};
};

// Hugging Face's fields that hearth accepts without effect, with the reason
// (hearth/train/training_arguments_inert.cpp). Part of training_argument_fields().
std::vector<TrainingArgumentField> inert_training_argument_fields();

const std::vector<TrainingArgumentField>& training_argument_fields();
// The field named `name` (or by one of its aliases), or nullptr.
const TrainingArgumentField* find_training_argument_field(const std::string& name);

// Hugging Face's fields removed in transformers 5, each with what to use
// instead; named in a file or on a command line, they are refused saying so.
const std::vector<std::pair<std::string, std::string>>& removed_training_arguments();
// ValueError "[trainer] <context>: <name> was removed ...; <instead>" for a removed name.
void refuse_removed_field(const std::string& name, const std::string& context);

// Sets one field from command-line text (booleans take true/false/1/0/yes/no;
// optional fields take "none" to unset). `context` names the source in
// messages ("--seed"). Unknown names throw ValueError.
void set_training_argument(TrainingArguments& args, const std::string& name, const std::string& text,
                           const std::string& context);

}  // namespace hearth::train
