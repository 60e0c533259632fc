#include "hearth/train/trainer.h"

#include <algorithm>
#include <array>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <iostream>
#include <map>
#include <numeric>
#include <random>
#include <sstream>

#include "hearth/autograd/anomaly_mode.h"
#include "hearth/autograd/grad_mode.h"
#include "hearth/core/backend_options.h"
#include "hearth/core/device_runtime.h"
#include "hearth/core/errors.h"
#include "hearth/core/generator.h"
#include "hearth/data/shard_dataset.h"
#include "hearth/distributed/arrival.h"
#include "hearth/distributed/gradient_reducer.h"
#include "hearth/distributed/init.h"
#include "hearth/io/atomic_file.h"
#include "hearth/ops/elementwise.h"
#include "hearth/ops/factory.h"
#include "hearth/ops/indexing.h"
#include "hearth/ops/nn_functional.h"
#include "hearth/optim/clip_grad.h"
#include "hearth/train/checkpoint.h"
#include "hearth/train/count_text.h"
#include "hearth/train/curves_plot.h"
#include "hearth/train/log_failure.h"
#include "hearth/train/metrics.h"
#include "hearth/train/metrics_log.h"
#include "hearth/train/output_dir_lock.h"
#include "hearth/train/progress.h"
#include "hearth/train/signals.h"
#include "hearth/train/step_graph.h"
#include "hearth/train/tensorboard.h"

namespace fs = std::filesystem;

namespace hearth::train {
namespace {

using json = nlohmann::json;
using Clock = std::chrono::steady_clock;

double seconds_since(Clock::time_point t0) { return std::chrono::duration<double>(Clock::now() - t0).count(); }

// Mixed precision keeps float32 master weights on a backend that has the
// products in the autocast dtype; anything else fails here, before training.
void check_precision(const TrainingArguments& args, const DeviceChoice& device, const nn::Module& model) {
  const std::optional<DType> dtype = args.autocast_dtype();
  if (!dtype) return;
  for (const auto& [name, p] : model.named_parameters()) {
    HEARTH_CHECK(p.dtype() == DType::float32, ValueError, "[trainer] precision \"", args.precision,
                 "\" keeps the weights in float32 and computes in ", dtype_name(*dtype), ", but parameter '", name,
                 "' is ", dtype_name(p.dtype()), "; build the model in float32, or use precision \"fp32\"");
  }
  try {
    check_autocast_supported(device.device.kind, *dtype);
  } catch (const Error& e) {
    HEARTH_THROW(ValueError, "[trainer] precision \"", args.precision, "\" cannot run on ", device.device.str(), ": ",
                 e.what());
  }
}

// Collectives need one dtype per call: tensors are grouped by dtype, in a
// fixed order so every rank issues the same calls.
std::vector<std::vector<Tensor>> by_dtype(const std::vector<Tensor>& tensors) {
  std::map<int, std::vector<Tensor>> groups;
  for (const Tensor& t : tensors) groups[static_cast<int>(t.dtype())].push_back(t);
  std::vector<std::vector<Tensor>> out;
  for (auto& [dtype, list] : groups) out.push_back(std::move(list));
  return out;
}

// Every field of `batch` on `device`.
data::Batch to_device(const data::Batch& batch, Device device) {
  data::Batch out;
  for (const auto& [name, t] : batch) out[name] = t.to(device);
  return out;
}

// Two random 64-bit words: what identifies a run in its trainer_state.json.
std::array<int64_t, 2> random_run_words() {
  std::random_device rd;
  std::array<int64_t, 2> w{};
  for (int64_t& x : w) x = static_cast<int64_t>((static_cast<uint64_t>(rd()) << 32) ^ rd());
  return w;
}

std::string run_id_text(const std::array<int64_t, 2>& w) {
  char buf[40];
  std::snprintf(buf, sizeof buf, "%016llx%016llx", static_cast<unsigned long long>(w[0]),
                static_cast<unsigned long long>(w[1]));
  return buf;
}

// How many samples a step's batches hold: the first dimension of a field
// every batch has (the labels where there are some).
int64_t samples_in(const std::vector<data::Batch>& group) {
  int64_t n = 0;
  for (const data::Batch& b : group) {
    if (b.empty()) continue;
    const Tensor& t = b.contains(data::field::kLabels) ? b.at(data::field::kLabels) : b.begin()->second;
    if (t.dim() > 0) n += t.size(0);
  }
  return n;
}

// Hugging Face's estimate of a training step's floating-point operations on
// one process: 6 per parameter per token (2 in the forward, 4 in the
// backward), the tokens being a text batch's input ids, or for other inputs
// its samples.
double step_flos(const nn::Module& model, const std::vector<data::Batch>& group) {
  double parameters = 0;
  for (const Tensor& p : model.parameters()) parameters += static_cast<double>(p.numel());
  double tokens = 0;
  for (const data::Batch& b : group) {
    if (b.contains(data::field::kInputIds)) {
      tokens += static_cast<double>(b.at(data::field::kInputIds).numel());
    } else {
      tokens += static_cast<double>(samples_in({b}));
    }
  }
  return 6.0 * parameters * tokens;
}

}  // namespace

ForwardOutput image_classification_forward(nn::Module& model, const data::Batch& batch) {
  Tensor logits = model.forward(batch.at(data::field::kPixelValues));
  return {cross_entropy(logits, batch.at(data::field::kLabels)), logits};
}

ForwardOutput Trainer::run_forward(const data::Batch& batch) {
  data::Batch on_device = to_device(batch, device_.device);
  // Images in the model's layout (a no-op when the loader made them so):
  // its convolutions take their layout from their input.
  if (image_memory_format_ == MemoryFormat::channels_last && on_device.contains(data::field::kPixelValues)) {
    Tensor& pixels = on_device[data::field::kPixelValues];
    if (pixels.dim() == 4) pixels = pixels.contiguous(MemoryFormat::channels_last);
  }
  ForwardOutput out =
      options_.forward ? options_.forward(*model_, on_device) : image_classification_forward(*model_, on_device);
  HEARTH_CHECK(out.loss.defined() && out.loss.numel() == 1, ValueError,
               "[trainer] the forward function must return a loss with one element");
  if (args_.label_smoothing_factor > 0.0 && model_->is_training()) out.loss = smoothed_loss(out, on_device);
  return out;
}

// Hugging Face's Trainer smooths the labels in place of the model's own loss:
// cross-entropy of the logits against the batch's labels, as PyTorch's
// label_smoothing defines it. Evaluation keeps the model's loss, as there.
Tensor Trainer::smoothed_loss(const ForwardOutput& out, const data::Batch& batch) const {
  const bool has_labels = batch.contains(data::field::kLabels);
  const Tensor labels = has_labels ? batch.at(data::field::kLabels) : Tensor();
  HEARTH_CHECK(out.logits.defined() && out.logits.dim() == 2 && has_labels && is_integral(labels.dtype()), ValueError,
               "[trainer] label_smoothing_factor needs a classifier: logits [batch, classes] and integer labels; "
               "this model gives ",
               out.logits.defined() ? "logits " + shape_str(out.logits.shape()) : std::string("no logits"),
               has_labels ? " and labels of " + std::string(dtype_name(labels.dtype()))
                          : std::string(" and the batch has no labels"),
               "; set label_smoothing_factor to 0");
  return cross_entropy(out.logits, labels.reshape({-1}).to(DType::int64), Tensor(), -100, "mean",
                       args_.label_smoothing_factor);
}

Trainer::Trainer(std::shared_ptr<nn::Module> model, TrainingArguments args,
                 std::shared_ptr<const data::Dataset> train_dataset, std::shared_ptr<const data::Dataset> eval_dataset,
                 std::vector<CallbackPtr> callbacks, TrainerOptions options)
    : model_(std::move(model)),
      args_(std::move(args)),
      train_dataset_(std::move(train_dataset)),
      eval_dataset_(std::move(eval_dataset)),
      options_(std::move(options)) {
  HEARTH_CHECK(model_ != nullptr, ValueError, "[trainer] the model is null");
  args_.validate("training arguments");
  // tf32 as in Hugging Face's TrainingArguments: PyTorch's
  // set_float32_matmul_precision("high") or ("highest"); unset leaves the
  // backend options as they are (HEARTH_ALLOW_TF32, or what the program set).
  if (args_.tf32.has_value())
    set_float32_matmul_precision(*args_.tf32 ? Float32MatmulPrecision::high : Float32MatmulPrecision::highest);
  // Fails here, before any data is read, when the device cannot be used.
  device_ = select_device(args_.device, args_.use_cpu);
  model_->to(device_.device);
  check_precision(args_, device_, *model_);
  HEARTH_CHECK(!args_.gradient_checkpointing || model_->gradient_checkpointing_enable(true), ValueError,
               "[trainer] training arguments: gradient_checkpointing is on, but the model (", model_->type_name(),
               ") has no block that can recompute its activations; turn it off, or use a model that supports it "
               "(BERT's layers do)");
  join_process_group();
  if (!is_main_process()) options_.console = nullptr;  // rank 0 speaks for all
  if (args_.writes_jsonl() && is_main_process())
    callbacks_.push_back(std::make_shared<MetricsJsonlCallback>(metrics_path()));
  if (args_.writes_tensorboard() && is_main_process()) {
    try {
      callbacks_.push_back(std::make_shared<TensorBoardCallback>(
          args_.logging_dir.value_or(default_tensorboard_dir(args_.output_dir)), device_.device));
    } catch (const IoError& e) {  // a log is never why a run stops (log_failure.h)
      LogFailure("TensorBoard logging").give_up(e);
    }
  }
  if (options_.console != nullptr) {
    bool bar =
        options_.progress_bar.value_or(options_.console == &std::cout && progress_bar_by_default(args_.disable_tqdm));
    progress_ = std::make_shared<ProgressCallback>(*options_.console, bar);
    callbacks_.push_back(progress_);
  }
  for (CallbackPtr& cb : callbacks) add_callback(std::move(cb));
}

Trainer::~Trainer() = default;

void Trainer::join_process_group() {
  group_ = options_.process_group;
  if (group_ != nullptr) return;
  std::optional<distributed::Rendezvous> r = distributed::rendezvous_from_environment();
  if (!r || r->world_size == 1) return;
  const double seconds = distributed::dist_timeout_seconds(static_cast<double>(args_.ddp_timeout));
  group_ = distributed::init_process_group(*r, distributed::default_backend(device_.device), device_.device,
                                           std::chrono::milliseconds(static_cast<int64_t>(seconds * 1000.0)));
}

void Trainer::copy_model_from_main_process(bool parameters_too) {
  if (!group_) return;
  NoGradGuard no_grad;
  std::vector<Tensor> tensors = parameters_too ? model_->parameters() : std::vector<Tensor>{};
  for (const Tensor& b : model_->buffers()) tensors.push_back(b);
  for (const std::vector<Tensor>& same_dtype : by_dtype(tensors)) group_->broadcast(same_dtype, 0)->wait();
  // Written in place: their versions say so (autocast's copies of the
  // parameters, param_half_copies.h, follow the version).
  for (const Tensor& t : tensors) t.bump_version();
}

int Trainer::agreed_stop_signal() {
  int pending = StopSignalGuard::pending();
  if (!group_) return pending;
  // Ranks may see a signal at different steps; all stop at the first step any saw it.
  Tensor flag = full({1}, static_cast<int64_t>(pending), DType::int64, device_.device);
  group_->all_reduce({flag}, distributed::ReduceOp::max)->wait();
  return static_cast<int>(flag.item<int64_t>());
}

void Trainer::add_callback(CallbackPtr callback) {
  HEARTH_CHECK(callback != nullptr, ValueError, "[trainer] a callback is null");
  callbacks_.push_back(std::move(callback));
}

std::string Trainer::metrics_path() const { return (fs::path(args_.output_dir) / "metrics.jsonl").string(); }

std::string Trainer::curves_path() const { return (fs::path(args_.output_dir) / "curves.svg").string(); }

void Trainer::say(const std::string& line) {
  if (options_.console == nullptr) return;
  *options_.console << line << "\n";
  options_.console->flush();
}

json Trainer::entry_at_step() const { return {{"epoch", state_.epoch}, {"step", state_.global_step}}; }

void Trainer::log(json entry) {
  state_.log_history.push_back(entry);
  for (CallbackPtr& cb : callbacks_) cb->on_log(args_, state_, control_, entry);
}

// ---- the loop ----------------------------------------------------------------

TrainOutput Trainer::train() {
  say("hearth: training on " + device_.description);
  // One run per output_dir, taken before anything in it is removed or written
  // and held until train() returns.
  std::optional<OutputDirLock> output_lock;
  if (is_main_process()) {  // rank 0 owns the output directory
    output_lock.emplace(args_.output_dir);
    if (!output_lock->held())
      say("hearth: warning: output_dir is not locked against a second run: " + output_lock->reason());
  }
  setup_training();
  std::optional<StopSignalGuard> signals;
  if (options_.handle_signals) signals.emplace();
  std::optional<autograd::DetectAnomalyGuard> anomaly;
  if (args_.detect_anomaly) {
    anomaly.emplace();
    say("hearth: anomaly detection is on: every op's outputs are checked for NaN/Inf (slower)");
  }
  // A run killed inside a save leaves its temporary tree behind; it is never
  // a checkpoint, and nothing else would remove it.
  if (is_main_process())  // rank 0 owns the output directory
    for (const std::string& dir : remove_unfinished_checkpoints(args_.output_dir))
      say("hearth: removed " + dir +
          (dir.ends_with(kDeletingSuffix) ? " (an old checkpoint whose removal did not finish)"
                                          : " (a checkpoint save that did not finish)"));
  if (args_.resume_from_checkpoint.has_value()) {
    resume(resolve_checkpoint(*args_.resume_from_checkpoint, args_.output_dir,
                              options_.model_files.is_set() ? options_.model_files.main_file : kModelFile));
  } else {
    prepare_output_dir();
  }
  copy_model_from_main_process(/*parameters_too=*/true);
  start_step_ = state_.global_step;
  last_log_step_ = last_eval_step_ = last_save_step_ = state_.global_step;
  state_.is_training = true;
  model_->train();
  const auto t0 = Clock::now();
  try {
    for (CallbackPtr& cb : callbacks_) cb->on_train_begin(args_, state_, control_);
    // A baseline before any step, as Hugging Face's eval_on_start gives.
    if (args_.eval_on_start && state_.global_step == 0 && eval_dataset_ != nullptr) evaluate();
    if (loader_->state().batches_yielded == 0)
      for (CallbackPtr& cb : callbacks_) cb->on_epoch_begin(args_, state_, control_);
    run_loop();
    end_of_training();
  } catch (const distributed::DistError& e) {
    state_.is_training = false;
    if (progress_) progress_->close();
    // The collective fails on the ranks that reached it: name those that did not.
    const std::string missing = ranks_missing_from_collective();
    if (missing.empty()) throw;
    HEARTH_THROW(distributed::DistError, e.what(), " The ", missing,
                 " (they never reached this collective: hung, stuck or exited; see their output).");
  } catch (...) {
    state_.is_training = false;
    if (progress_) progress_->close();
    abandon_step_graphs();
    save_after_failure();
    throw;
  }
  state_.is_training = false;
  eval_graph_.reset();  // training's evaluations are over: its memory goes back

  TrainOutput out;
  out.global_step = state_.global_step;
  out.training_loss = state_.global_step > 0 ? state_.total_loss / static_cast<double>(state_.global_step) : 0.0;
  const double runtime = seconds_since(t0);
  const double steps = static_cast<double>(state_.global_step - start_step_);
  out.metrics = {
      {"train_runtime", runtime},
      {"train_samples_per_second", runtime > 0 ? steps * static_cast<double>(state_.train_batch_size) / runtime : 0.0},
      {"train_steps_per_second", runtime > 0 ? steps / runtime : 0.0},
      {"total_flos", state_.total_flos},
      {"train_loss", out.training_loss},
      {"epoch", state_.epoch}};
  if (stop_signal_ == 0) {
    json summary = json(out.metrics);
    summary["step"] = state_.global_step;
    log(summary);
  }
  for (CallbackPtr& cb : callbacks_) cb->on_train_end(args_, state_, control_);
  if (args_.draws_curves() && is_main_process()) {
    try {
      write_training_curves(state_.log_history, "training curves: " + args_.output_dir, curves_path());
    } catch (const IoError& e) {  // the run is done and saved: the plot is not worth failing it
      LogFailure("the training curves (" + curves_path() + ")").give_up(e);
    }
  }
  out.interrupted_by_signal = stop_signal_;
  out.stop_reason = control_.stop_reason;
  out.last_checkpoint = last_checkpoint_;
  out.best_checkpoint = best_checkpoint_dir();
  return out;
}

void Trainer::run_loop() {
  const auto ga = static_cast<size_t>(args_.gradient_accumulation_steps);
  while (state_.global_step < state_.max_steps) {
    // What a step that fails part way (a batch that cannot be read, an
    // OutOfMemoryError in the forward, backward or optimizer step) must give
    // back, so that the run is as if the step never started: the batches it
    // drew and the random numbers it used. The optimizer undoes its own state
    // (Optimizer::step is all or nothing); partial gradients are dropped.
    const data::DataLoaderState position = loader_->state();
    const uint64_t rng_seed = default_generator().seed(), rng_offset = default_generator().offset();
    const int64_t step_before = state_.global_step;
    std::vector<data::Batch> group;
    try {
      const auto wait_begins = std::chrono::steady_clock::now();
      while (group.size() < ga) {
        std::optional<data::Batch> b = loader_->next();
        if (!b) break;
        group.push_back(std::move(*b));
      }
      timeline_->host_waited(std::chrono::duration<double>(std::chrono::steady_clock::now() - wait_begins).count());
      if (group.empty()) {
        // The epoch ended at the previous step, whose epoch events already ran.
        loader_->set_epoch(loader_->epoch() + 1);
        for (CallbackPtr& cb : callbacks_) cb->on_epoch_begin(args_, state_, control_);
        continue;
      }
      timeline_->step_begins();
      training_step(group);
    } catch (...) {
      // Any failure (out of memory, a device error, a batch that cannot be
      // made) gives the step back the same way, so that the state can still
      // be saved (save_after_failure) and resumed.
      timeline_->discard();
      if (state_.global_step == step_before && !updating_parameters_) {  // the step did not complete
        optimizer_->zero_grad();
        loader_->load_state(position);
        default_generator().set_state(rng_seed, rng_offset);
      }
      throw;
    }
    timeline_->step_ends(samples_in(group));
    state_.total_flos += step_flos(*model_, group) * world_size();  // every process's share alike
    after_step(loader_->state().batches_yielded >= loader_->num_batches());
    if (stop_signal_ != 0 || control_.should_training_stop) break;
  }
}

void Trainer::save_after_failure() noexcept {
  // One process alone: the ranks of a data-parallel run cannot agree on a save
  // once one of them has failed. An update cut short leaves weights of no
  // known step; a run that saves nothing (save_strategy "no") is not saved.
  const int64_t step = state_.global_step;
  if (world_size() != 1 || updating_parameters_ || args_.save_strategy == "no" || step == save_failed_step_) return;
  try {
    if (step == last_save_step_ || step == 0) {
      if (!last_checkpoint_.empty())
        say("hearth: the run failed after " + last_checkpoint_ + ", which holds every step it completed; resume " +
            "from it with --resume_from_checkpoint " + last_checkpoint_ + " once the cause is fixed.");
      return;
    }
    const std::string dir = save_checkpoint();
    say("hearth: the run failed after step " + std::to_string(step) + "; saved " + dir +
        " with the steps it completed. Resume with the same command and --resume_from_checkpoint " + dir +
        " once the cause is fixed.");
  } catch (const std::exception& e) {
    try {
      say(std::string("hearth: the run failed after step ") + std::to_string(step) +
          " and could not be saved: " + e.what());
    } catch (...) {
    }
  } catch (...) {
  }
}

void Trainer::after_step(bool epoch_done) {
  for (CallbackPtr& cb : callbacks_) cb->on_step_end(args_, state_, control_);
  const int64_t step = state_.global_step;
  if (epoch_done) {
    report_epoch_timing("epoch");
    for (CallbackPtr& cb : callbacks_) cb->on_epoch_end(args_, state_, control_);
  }
  // The last step is logged too, so the final loss precedes the final evaluation.
  const bool log_now = control_.should_log || step == state_.max_steps ||
                       (args_.logging_strategy == "steps" && step % args_.logging_steps == 0) ||
                       (args_.logging_strategy == "epoch" && epoch_done) || (args_.logging_first_step && step == 1);
  if (log_now) log_training_loss();
  const bool eval = control_.should_evaluate ||
                    (args_.eval_strategy == "steps" && step % args_.effective_eval_steps() == 0) ||
                    (args_.eval_strategy == "epoch" && epoch_done);
  if (eval) evaluate();
  // save_strategy "best": after an evaluation that found a new best model.
  const bool new_best = eval && state_.best_metric.has_value() && state_.best_global_step == step;
  const bool save = control_.should_save || (args_.save_strategy == "steps" && step % args_.save_steps == 0) ||
                    (args_.save_strategy == "epoch" && epoch_done) || (args_.save_strategy == "best" && new_best);
  if (save) save_checkpoint();
  control_.should_log = control_.should_evaluate = control_.should_save = false;

  const int signal = options_.handle_signals ? agreed_stop_signal() : 0;
  if (signal != 0) {
    stop_signal_ = signal;
    if (last_save_step_ != step) save_checkpoint();
  }
}

void Trainer::end_of_training() {
  const int64_t step = state_.global_step;
  report_epoch_timing("the last steps");  // those after the last complete epoch, if any
  finish_step_graphs();
  if (stop_signal_ != 0) {
    std::ostringstream os;
    os << "hearth: stopped by " << signal_name(stop_signal_) << " at step " << step << "; saved " << last_checkpoint_
       << ". Resume with the same command and --resume_from_checkpoint " << last_checkpoint_
       << " (or --resume_from_checkpoint latest).";
    if (progress_) progress_->close();
    say(os.str());
    return;
  }
  if (last_log_step_ != step) log_training_loss();
  const bool final_eval = args_.eval_strategy != "no" && last_eval_step_ != step;
  if (final_eval) evaluate();
  const bool new_best = final_eval && state_.best_metric.has_value() && state_.best_global_step == step;
  if (last_save_step_ != step &&
      ((args_.save_strategy != "no" && args_.save_strategy != "best") || (args_.save_strategy == "best" && new_best)))
    save_checkpoint();
  if (!control_.stop_reason.empty()) say("hearth: " + control_.stop_reason);
  if (args_.load_best_model_at_end && !state_.best_model_checkpoint.empty()) load_best_model();
}

void Trainer::report_epoch_timing(const char* what) {
  std::optional<EpochTiming> t = timeline_->finish_epoch();
  if (!t || t->steps < 2) return;
  std::ostringstream os;
  os << "hearth: " << what;
  if (std::string(what) == "epoch") os << " " << std::lround(state_.epoch);
  os << ": " << timing_text(*t, "training steps");
  say(os.str());
}

std::string Trainer::new_run_id() {
  std::array<int64_t, 2> words = random_run_words();
  if (group_) {  // one id for all ranks: rank 0's
    Tensor t = tensor(std::vector<int64_t>{words[0], words[1]}, {2}).to(device_.device);
    group_->broadcast({t}, 0)->wait();
    std::vector<int64_t> v = t.cpu().to_vector<int64_t>();
    words = {v[0], v[1]};
  }
  return run_id_text(words);
}

std::string Trainer::ranks_missing_from_collective() {
  if (!group_ || !group_->store()) return "";
  // Ranks that reached the collective time out within moments of each other.
  const double timeout_s = distributed::dist_timeout_seconds(static_cast<double>(args_.ddp_timeout));
  const auto grace = std::chrono::milliseconds(static_cast<int64_t>(std::min(timeout_s, 10.0) * 1000.0));
  std::optional<std::vector<int>> missing =
      distributed::ranks_that_did_not_arrive(*group_->store(), rank(), world_size(), grace);
  if (!missing || missing->empty()) return "";
  return distributed::missing_ranks_text(*missing);
}

std::string Trainer::best_checkpoint_dir() const {
  return resolve_checkpoint_reference(args_.output_dir, state_.best_model_checkpoint);
}

void Trainer::load_best_model() {
  const std::string dir = best_checkpoint_dir();
  const std::string what = "[trainer] load_best_model_at_end: the best checkpoint (" + args_.best_metric_key() + " " +
                           number_text(*state_.best_metric) + " at step " + std::to_string(state_.best_global_step) +
                           ") " + dir;
  HEARTH_CHECK(fs::is_directory(dir), IoError, what,
               " does not exist (moved or deleted?); the model of the last step is the one in memory");
  // The folder may hold a checkpoint of the same name from another run (a
  // reused output_dir, a path that meant another directory): never load it.
  TrainerState saved = TrainerState::from_json(read_trainer_state(dir), (fs::path(dir) / kTrainerStateFile).string());
  const bool other_run = !saved.run_id.empty() && saved.run_id != state_.run_id;
  HEARTH_CHECK(!other_run && saved.global_step == state_.best_global_step, ValueError, what,
               " is not this run's: its trainer_state.json is of ",
               other_run ? "run " + saved.run_id + " (this run is " + state_.run_id + ")" : std::string("this run"),
               ", at step ", saved.global_step, "; refusing to load it as the best model");
  load_model_weights(dir, *model_, options_.model_files);
  std::ostringstream os;
  os << "hearth: loaded the best model (" << args_.best_metric_key() << " " << number_text(*state_.best_metric)
     << " at step " << state_.best_global_step << ") from " << dir;
  say(os.str());
}

// ---- evaluation and checkpoints ----------------------------------------------

}  // namespace hearth::train
