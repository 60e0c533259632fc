// Trainer: the training loop of Hugging Face's Trainer for hearth models.
//
//   auto model = std::make_shared<nn::models::SmallCNN>();
//   TrainingArguments args;
//   args.output_dir = "runs/cnn";
//   args.learning_rate = 1e-3;
//   Trainer trainer(model, args, train_set, test_set);
//   TrainOutput out = trainer.train();
//   Metrics m = trainer.evaluate();
//
// By default the model is a Module whose single-tensor forward takes a batch's
// "pixel_values" and returns logits [N, C], and the loss is the cross-entropy
// against the batch's "labels". Models with other inputs (BERT reads
// input_ids, token_type_ids, attention_mask) or other losses (regression)
// pass TrainerOptions::forward; TrainerOptions::compute_metrics replaces the
// evaluation's accuracy/F1 with the task's metrics. The Trainer picks the device
// (hearth/train/device_select.h), moves the model there, builds AdamW (or the
// optimizer args.optim names; biases and other 1-d parameters get no weight
// decay) and the learning-rate schedule, and runs:
//
//   per optimizer step: gradient_accumulation_steps batches, each loss scaled
//   by its share of the step's samples (so accumulation equals one large
//   batch); clip to max_grad_norm; optimizer step; schedule step.
//   With args.precision bf16-mixed or fp16-mixed, each forward pass and its
//   loss (training and evaluation) run under autocast (hearth/ops/autocast.h)
//   while the weights, gradients and optimizer stay float32; fp16-mixed also
//   scales the loss (hearth/optim/grad_scaler.h), unscales the gradients before
//   clipping, and skips the optimizer and schedule step when a gradient
//   overflowed. The scaler's state is saved in checkpoints. Losses stay
//   on the device until a logging step reads them (on the CPU, where reading
//   costs nothing, every step is checked at once); a NaN or infinite loss
//   stops training with an error naming the step.
//   then, as args say: log, evaluate, save a checkpoint (hearth/train/checkpoint.h),
//   and call the callbacks (hearth/train/callbacks.h).
//
// With args.auto_find_batch_size, a step whose forward or backward pass runs
// out of memory is retried with each batch run in slices of half the size
// (again and again, down to one sample), the losses weighted so that the step
// is unchanged. Logs go where args.report_to says (metrics.jsonl, TensorBoard
// event files), and training ends by drawing output_dir/curves.svg.
//
// Data parallelism: under a launcher (hearth launch, torchrun, srun, mpirun:
// hearth/distributed/rendezvous.h) with more than one process, or given
// TrainerOptions::process_group, each process trains a replica: the
// parameters and buffers start as rank 0's, each rank reads its share of
// every epoch (DistributedSampler), the gradients of the step's last
// micro-batch are averaged over ranks in buckets while backward runs
// (hearth/distributed/gradient_reducer.h), the logged loss is the mean over ranks,
// evaluation metrics cover the whole evaluation set (each rank evaluates a
// share), and only rank 0 prints, writes metrics and saves checkpoints. One
// optimizer step then consumes per_device_train_batch_size x
// gradient_accumulation_steps x world_size samples.
//
// With args.step_graphs, each step's forward and backward is recorded once as
// a step graph (a CUDA graph on CUDA) and replayed (hearth/train/step_graph.h,
// trainer_step_graphs.cpp): the batch is copied into the step's own device
// tensors, the gradients are zeroed in place inside the step rather than
// dropped after it, and clipping, the optimizer and the schedule run eagerly
// after each replay. Where a step cannot be recorded, training runs eagerly
// and says why once; step_graph_report() tells how many steps were replayed.
// Evaluation's forward is recorded and replayed the same way (its batches of
// per_device_eval_batch_size), the graph kept between the evaluations of a run.
//
// A SIGINT, SIGTERM or SIGHUP makes the loop save a checkpoint after the current step
// and return (TrainOutput::interrupted_by_signal). Resuming from a checkpoint
// restores weights, optimizer, schedule, RNG and data position, so the losses
// that follow equal those of a run that was never interrupted.
#pragma once

#include <functional>
#include <iostream>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "hearth/data/dataloader.h"
#include "hearth/distributed/process_group.h"
#include "hearth/nn/module.h"
#include "hearth/ops/autocast.h"
#include "hearth/optim/grad_scaler.h"
#include "hearth/optim/lr_scheduler.h"
#include "hearth/optim/optimizer.h"
#include "hearth/train/callbacks.h"
#include "hearth/train/checkpoint.h"
#include "hearth/train/device_select.h"
#include "hearth/train/step_timeline.h"
#include "hearth/train/trainer_state.h"
#include "hearth/train/training_arguments.h"

namespace hearth::distributed {
class GradientReducer;
}

namespace hearth::train {

class ProgressCallback;
class GraphedBatchStep;
class GraphedTrainingStep;

// What one forward pass gives the Trainer.
struct ForwardOutput {
  Tensor loss;    // 0-d, the mean over the batch's samples
  Tensor logits;  // [N, ...]: what evaluation turns into predictions
};
// Runs `model` on `batch` (every field already on the training device).
using ForwardFn = std::function<ForwardOutput(nn::Module& model, const data::Batch& batch)>;
// The metrics of a whole evaluation from every sample's logits [N, ...] and
// labels [N], both on the CPU, named without a prefix ("accuracy"); the
// Trainer adds the prefix and the loss.
using ComputeMetricsFn = std::function<Metrics(const Tensor& logits, const Tensor& labels)>;

// The default forward: logits = model.forward(batch["pixel_values"]), loss =
// cross_entropy(logits, batch["labels"]).
ForwardOutput image_classification_forward(nn::Module& model, const data::Batch& batch);

struct TrainerOptions {
  // How a batch becomes a loss and logits; unset: image_classification_forward.
  ForwardFn forward;
  // Unset: loss, accuracy and (two classes) F1 of the logits as class scores.
  ComputeMetricsFn compute_metrics;
  // How the training and evaluation loaders batch samples (e.g. padding
  // token sequences to the longest in the batch).
  data::CollateFn collate = data::default_collate;
  // The banner, progress and messages; nullptr keeps the Trainer silent.
  std::ostream* console = &std::cout;
  // A bar redrawn in place rather than lines; default: the console is
  // std::cout, stdout is a terminal and args.disable_tqdm is off.
  std::optional<bool> progress_bar;
  // Writes more files into each checkpoint directory (e.g. a model description).
  std::function<void(const std::string& dir)> checkpoint_extra_files;
  // How checkpoints hold the model (hearth/train/checkpoint.h); unset: the
  // whole state dict as model.safetensors. Resuming and loading the best
  // model read it back the same way.
  ModelFiles model_files;
  // Catch SIGINT/SIGTERM/SIGHUP during train() to save and stop cleanly.
  bool handle_signals = true;
  // The data-parallel group; default: joined from the launcher's environment
  // when it starts more than one process (gloo on the CPU, nccl on CUDA).
  distributed::ProcessGroupPtr process_group;
};

// How TrainingArguments::step_graphs went in the last train().
struct StepGraphReport {
  // Steps whose forward and backward the recorded graph did.
  int64_t replayed_steps = 0;
  // Steps run eagerly on a batch of other shapes than the recorded ones.
  int64_t other_shape_steps = 0;
  // Why training ran eagerly from some point on (empty while graphs could be used).
  std::string eager_reason;
};

struct TrainOutput {
  int64_t global_step = 0;
  double training_loss = 0.0;  // mean loss per optimizer step over the whole run
  // train_runtime, train_samples_per_second, train_steps_per_second, train_loss, epoch.
  Metrics metrics;
  int interrupted_by_signal = 0;  // SIGINT, SIGTERM or SIGHUP when a signal stopped training
  std::string stop_reason;        // why a callback stopped training early, if one did
  std::string last_checkpoint;    // the newest checkpoint of this run (empty if none)
  std::string best_checkpoint;    // the best model's checkpoint (empty if none)
};

class Trainer {
 public:
  Trainer(std::shared_ptr<nn::Module> model, TrainingArguments args, std::shared_ptr<const data::Dataset> train_dataset,
          std::shared_ptr<const data::Dataset> eval_dataset = nullptr, std::vector<CallbackPtr> callbacks = {},
          TrainerOptions options = {});
  ~Trainer();
  Trainer(const Trainer&) = delete;
  Trainer& operator=(const Trainer&) = delete;

  // Trains from scratch, or from args.resume_from_checkpoint.
  TrainOutput train();
  // Loss and accuracy (and F1 for two classes) of the model on the eval
  // dataset, keys prefixed "eval_"; logged and passed to on_evaluate.
  Metrics evaluate();
  Metrics evaluate(const std::shared_ptr<const data::Dataset>& dataset, const std::string& prefix = "eval_");
  // Saves output_dir/checkpoint-<global_step> now; returns its path.
  std::string save_checkpoint();
  // Writes output_dir/trainer_state.json (the state as a checkpoint holds it),
  // as Hugging Face's Trainer.save_state does at the end of a run.
  void save_state() const;

  void add_callback(CallbackPtr callback);
  const TrainingArguments& args() const { return args_; }
  const DeviceChoice& device_choice() const { return device_; }
  Device device() const { return device_.device; }
  nn::Module& model() { return *model_; }
  TrainerState& state() { return state_; }
  const TrainerState& state() const { return state_; }
  // Null until train() builds them.
  optim::Optimizer* optimizer() { return optimizer_.get(); }
  optim::LRScheduler* scheduler() { return scheduler_.get(); }
  // The loss scaler of an fp16-mixed run; null otherwise.
  optim::GradScaler* grad_scaler() { return scaler_.get(); }
  // Data parallelism: this process's rank and the number of processes (0 and 1 alone).
  int rank() const { return group_ ? group_->rank() : 0; }
  int world_size() const { return group_ ? group_->world_size() : 1; }
  // Rank 0: the process that prints, logs and saves.
  bool is_main_process() const { return rank() == 0; }
  const distributed::ProcessGroupPtr& process_group() const { return group_; }
  // Where metrics.jsonl goes (written only when args.report_to asks for it).
  std::string metrics_path() const;
  // output_dir/curves.svg, drawn when training ends unless report_to is "none".
  std::string curves_path() const;
  // The batch a forward pass takes: per_device_train_batch_size, or less once
  // auto_find_batch_size has halved it after running out of memory.
  int64_t micro_batch_size() const { return micro_batch_size_; }
  // args.step_graphs: what was replayed, or why nothing was.
  const StepGraphReport& step_graph_report() const { return step_graph_report_; }

 private:
  void setup_training();
  void prepare_output_dir();
  // IoError naming output_dir when it cannot be created.
  void create_output_dir() const;
  void resume(const std::string& checkpoint);
  void run_loop();
  void training_step(std::vector<data::Batch>& group);
  // Forward and backward of every batch of the step; returns the step's loss.
  Tensor accumulate_gradients(const std::vector<data::Batch>& group, int64_t samples);
  // Autocast to the precision's dtype on the training device; none for fp32.
  std::optional<AutocastGuard> autocast_scope() const;
  // Clipping, the optimizer and schedule steps (through the loss scaler for fp16), zeroing.
  void optimizer_step();
  void after_step(bool epoch_done);
  void end_of_training();
  // Says how fast the epoch's training steps ran on the device and how long it sat idle between them.
  void report_epoch_timing(const char* what);
  // After a failed collective: "ranks that did not arrive: 2" ("" if unknown).
  std::string ranks_missing_from_collective();
  // A fresh run id, the same on every rank.
  std::string new_run_id();
  // Where state_.best_model_checkpoint is: resolved in output_dir ("" if none).
  std::string best_checkpoint_dir() const;
  // load_best_model_at_end, refusing a checkpoint that is not this run's best.
  void load_best_model();
  void record_step_loss(const Tensor& loss);
  // args.step_graphs: what rules recording out before any step runs ("" if nothing).
  std::string step_graph_obstacles() const;
  // After an error ends train(): drops the recorded step and its kept gradients.
  void abandon_step_graphs();
  // Sets up the recorded step when args.step_graphs asks and nothing rules it out.
  void setup_step_graphs();
  // The step's forward and backward, replayed when it can be; returns the step's loss.
  Tensor graphed_forward_backward(const data::Batch& batch);
  // Back to eager steps for the rest of the run, saying why (once).
  void stop_step_graphs(std::string reason);  // by value: it may be the graph's own text
  // Says how many steps were replayed, then frees the graph.
  void finish_step_graphs();
  // What the training and evaluation loaders share: batches of `batch_size`,
  // the workers and their prefetch depth, the collate, pinned memory on an
  // accelerator, and where the batches go (the training device) and the form
  // their images take there: bfloat16 under bf16-mixed with the default
  // forward (its first layer computes in bfloat16 anyway), channels_last when
  // the model's convolutions run so. Also remembers that layout for
  // run_forward.
  data::DataLoaderOptions loader_options(int64_t batch_size);
  ForwardOutput run_forward(const data::Batch& batch);
  // The loss with label_smoothing_factor applied to the logits and labels.
  Tensor smoothed_loss(const ForwardOutput& out, const data::Batch& batch) const;
  class EvaluationPace;
  Metrics evaluate_with_compute_metrics(EvaluationPace& pace, GraphedBatchStep* graph, const std::string& prefix);
  // args.step_graphs for evaluation: the recorded forward, made on first use
  // and kept from one evaluation to the next while training; null where
  // evaluation runs eagerly (a device without step graphs, detect_anomaly,
  // or a forward the rehearsal refused).
  GraphedBatchStep* evaluation_graph();
  // One evaluation batch's forward: replayed from evaluation_graph() when
  // there is one (`graph`), else eagerly under the caller's autocast region.
  ForwardOutput evaluation_forward(GraphedBatchStep* graph, const data::Batch& batch);
  // Says once why the recorded evaluation runs eagerly, and frees the graph
  // when no training will evaluate again with it.
  void after_evaluation_graph(GraphedBatchStep* graph);
  void flush_loss_window();
  void log(nlohmann::json entry);
  void log_training_loss();
  void say(const std::string& line);
  nlohmann::json entry_at_step() const;
  void join_process_group();
  void copy_model_from_main_process(bool parameters_too);
  int agreed_stop_signal();

  std::shared_ptr<nn::Module> model_;
  TrainingArguments args_;
  std::shared_ptr<const data::Dataset> train_dataset_, eval_dataset_;
  std::vector<CallbackPtr> callbacks_;
  TrainerOptions options_;
  std::shared_ptr<ProgressCallback> progress_;
  std::unique_ptr<StepTimeline> timeline_;
  DeviceChoice device_;
  // The layout the model takes its pixel_values in (loader_options).
  MemoryFormat image_memory_format_ = MemoryFormat::contiguous;
  distributed::ProcessGroupPtr group_;
  std::unique_ptr<distributed::GradientReducer> reducer_;

  TrainerState state_;
  TrainerControl control_;
  std::unique_ptr<optim::Optimizer> optimizer_;
  std::unique_ptr<optim::LRScheduler> scheduler_;
  std::unique_ptr<optim::GradScaler> scaler_;
  std::unique_ptr<data::DataLoader> loader_;
  std::vector<Tensor> params_;
  // Non-null while steps go through a recorded graph (args.step_graphs).
  std::unique_ptr<GraphedTrainingStep> step_graphs_;
  StepGraphReport step_graph_report_;
  std::unique_ptr<GraphedBatchStep> eval_graph_;
  // Why evaluation runs eagerly until train() starts again ("" while it may be recorded).
  std::string eval_graph_refused_;

  // Per-step losses since the last flush, on the device: [logging_steps].
  Tensor loss_window_;
  int64_t window_count_ = 0;
  int64_t micro_batch_size_ = 0;
  Tensor grad_norm_;
  int64_t start_step_ = 0;
  int64_t last_log_step_ = -1, last_eval_step_ = -1, last_save_step_ = -1;
  std::string last_checkpoint_;
  int stop_signal_ = 0;
  // From the optimizer's update until the step is counted: a failure there
  // leaves weights whose step is not known, which no checkpoint may hold.
  bool updating_parameters_ = false;
  // The step whose save failed (a full disk): saving it again after the
  // failure would only fail again.
  int64_t save_failed_step_ = -1;
  // After train() fails: saves the steps completed since the last checkpoint
  // when the state is whole, and says which checkpoint to resume from.
  void save_after_failure() noexcept;
};

}  // namespace hearth::train
