// The Trainer's set-up before the first step: data loader, optimizer and
// scheduler, the output folder, and resuming from a checkpoint.
#include <filesystem>
#include <sstream>

#include "hearth/core/errors.h"
#include "hearth/core/generator.h"
#include "hearth/distributed/gradient_reducer.h"
#include "hearth/optim/adam.h"
#include "hearth/optim/sgd.h"
#include "hearth/train/checkpoint.h"
#include "hearth/train/count_text.h"
#include "hearth/train/output_dir_lock.h"
#include "hearth/train/signals.h"
#include "hearth/train/trainer.h"
#include "hearth/train/training_memory.h"

namespace hearth::train {
namespace {

namespace fs = std::filesystem;

std::unique_ptr<optim::Optimizer> make_optimizer(const TrainingArguments& a, const std::vector<Tensor>& params) {
  // PyTorch and Hugging Face practice: biases and normalisation weights (the
  // 1-d parameters) are not decayed.
  std::vector<Tensor> decay, no_decay;
  for (const Tensor& p : params) (p.dim() >= 2 ? decay : no_decay).push_back(p);
  std::vector<optim::ParamGroup> groups;
  if (!decay.empty()) groups.push_back(optim::ParamGroup{decay, {}});
  if (!no_decay.empty()) groups.push_back(optim::ParamGroup{no_decay, {{"weight_decay", 0.0}}});
  if (a.optim == "sgd") {
    return std::make_unique<optim::SGD>(
        groups, optim::SGDOptions{.lr = a.learning_rate, .momentum = 0.9, .weight_decay = a.weight_decay});
  }
  if (a.optim == "adam") {
    return std::make_unique<optim::Adam>(groups, optim::AdamOptions{.lr = a.learning_rate,
                                                                    .beta1 = a.adam_beta1,
                                                                    .beta2 = a.adam_beta2,
                                                                    .eps = a.adam_epsilon,
                                                                    .weight_decay = a.weight_decay});
  }
  return std::make_unique<optim::AdamW>(groups, optim::AdamWOptions{.lr = a.learning_rate,
                                                                    .beta1 = a.adam_beta1,
                                                                    .beta2 = a.adam_beta2,
                                                                    .eps = a.adam_epsilon,
                                                                    .weight_decay = a.weight_decay});
}

std::string optimizer_label(const std::string& optim) {
  if (optim == "sgd") return "SGD (momentum 0.9)";
  if (optim == "adam") return "Adam";
  return "AdamW";
}

}  // namespace

// ---- setup -------------------------------------------------------------------

void Trainer::setup_training() {
  HEARTH_CHECK(train_dataset_ != nullptr, ValueError, "[trainer] train() needs a train_dataset");
  HEARTH_CHECK(args_.eval_strategy == "no" || eval_dataset_ != nullptr, ValueError, "[trainer] eval_strategy is \"",
               args_.eval_strategy, "\" but no eval_dataset was given; pass one or set eval_strategy to \"no\"");
  params_.clear();
  for (const Tensor& p : model_->parameters())
    if (p.requires_grad()) params_.push_back(p);
  HEARTH_CHECK(!params_.empty(), ValueError, "[trainer] the model has no parameters that require grad");

  data::DataLoaderOptions lo = loader_options(args_.per_device_train_batch_size);
  lo.shuffle = true;
  lo.seed = static_cast<uint64_t>(args_.data_seed.value_or(args_.seed));
  lo.drop_last = args_.dataloader_drop_last;
  lo.num_replicas = world_size();
  lo.rank = rank();
  loader_ = std::make_unique<data::DataLoader>(train_dataset_, lo);
  timeline_ = std::make_unique<StepTimeline>(device_.device);
  // A last batch of one sample breaks batch norm (no variance to normalise
  // by): it is dropped, as dataloader_drop_last would, and said once.
  if (!lo.drop_last && lo.batch_size > 1 && loader_->num_batches() > 1 && loader_->num_samples() % lo.batch_size == 1) {
    lo.drop_last = true;
    loader_ = std::make_unique<data::DataLoader>(train_dataset_, lo);
    say("hearth: each epoch's last training batch would hold 1 sample (" + std::to_string(loader_->num_samples()) +
        " per epoch in batches of " + std::to_string(lo.batch_size) +
        "), which batch norm cannot train on: it is dropped (set dataloader_drop_last to drop every smaller one)");
  }
  const int64_t batches = loader_->num_batches();
  HEARTH_CHECK(batches > 0, ValueError, "[trainer] the training set has ", train_dataset_->size(),
               " samples: not one batch of ", args_.per_device_train_batch_size,
               args_.dataloader_drop_last ? " (dataloader_drop_last is set)" : "");

  const int64_t ga = args_.gradient_accumulation_steps;
  state_ = TrainerState{};
  state_.steps_per_epoch = (batches + ga - 1) / ga;
  state_.max_steps =
      args_.max_steps > 0
          ? args_.max_steps
          : std::max<int64_t>(1, static_cast<int64_t>(
                                     std::ceil(args_.num_train_epochs * static_cast<double>(state_.steps_per_epoch))));
  state_.num_train_epochs = static_cast<double>(state_.max_steps) / static_cast<double>(state_.steps_per_epoch);
  state_.train_batch_size = args_.per_device_train_batch_size * ga * world_size();
  state_.world_size = world_size();
  state_.logging_steps = args_.logging_steps;
  state_.eval_steps = args_.effective_eval_steps();
  state_.save_steps = args_.save_steps;
  state_.run_id = new_run_id();

  // Said now, before the gradients and the optimizer state are allocated.
  check_training_memory_fits(training_memory(params_, args_.optim), device_memory_bytes(device_.device),
                             device_.device.str());
  optimizer_ = make_optimizer(args_, params_);
  const int64_t warmup =
      args_.warmup_steps > 0
          ? args_.warmup_steps
          : static_cast<int64_t>(std::ceil(args_.warmup_ratio * static_cast<double>(state_.max_steps)));
  scheduler_ = optim::get_scheduler(args_.lr_scheduler_type, *optimizer_, warmup, state_.max_steps);
  scaler_ = args_.uses_grad_scaler() ? std::make_unique<optim::GradScaler>() : nullptr;
  reducer_.reset();
  if (group_) reducer_ = std::make_unique<distributed::GradientReducer>(group_, params_);

  micro_batch_size_ = args_.per_device_train_batch_size;
  loss_window_ = Tensor();
  window_count_ = 0;
  grad_norm_ = Tensor();
  last_checkpoint_.clear();
  stop_signal_ = 0;
  control_ = TrainerControl{};

  std::ostringstream os;
  os << "hearth: " << count_of(static_cast<int64_t>(train_dataset_->size()), "training sample") << "; "
     << count_of(state_.max_steps, "step") << " of " << count_of(state_.train_batch_size, "sample") << " (batch "
     << args_.per_device_train_batch_size << " x " << ga << " accumulation"
     << (group_ ? " x " + count_of(world_size(), "process", "processes") : std::string()) << "), "
     << count_of(state_.steps_per_epoch, "step") << " per epoch; " << optimizer_label(args_.optim) << " lr "
     << number_text(args_.learning_rate) << ", " << args_.lr_scheduler_type << " schedule, "
     << count_of(warmup, "warm-up step");
  if (args_.autocast_dtype())
    os << "; precision " << args_.precision << " (" << dtype_name(*args_.autocast_dtype())
       << " compute, float32 weights" << (scaler_ ? ", dynamic loss scaling" : "") << ")";
  say(os.str());
  if (group_) {
    say("hearth: data-parallel over " + std::to_string(world_size()) + " processes (" + group_->backend() +
        "), gradients averaged in " + count_of(static_cast<int64_t>(reducer_->num_buckets()), "bucket"));
  }
  setup_step_graphs();
}

void Trainer::prepare_output_dir() {
  if (!is_main_process()) return;  // rank 0 owns the output directory
  auto existing = list_checkpoints(args_.output_dir);
  if (!existing.empty()) {
    HEARTH_CHECK(args_.overwrite_output_dir, ValueError, "[trainer] output_dir '", args_.output_dir,
                 "' already holds checkpoints (", fs::path(existing.front().second).filename().string(),
                 existing.size() > 1 ? " ... " + fs::path(existing.back().second).filename().string() : "",
                 "); pass --resume_from_checkpoint latest to continue that run, --overwrite_output_dir to replace "
                 "it, or choose another --output_dir");
    for (const auto& [step, dir] : existing) {
      const std::string problem = remove_checkpoint(dir);
      HEARTH_CHECK(problem.empty(), IoError,
                   "[trainer] cannot remove a checkpoint of the run being replaced: ", problem);
    }
  }
  create_output_dir();
}

void Trainer::create_output_dir() const {
  std::error_code ec;
  fs::create_directories(args_.output_dir, ec);
  HEARTH_CHECK(!ec, IoError, "[trainer] output_dir '", args_.output_dir, "': cannot create it: ", ec.message());
}

void Trainer::resume(const std::string& dir) {
  // The checkpoint resumed from is complete: a second stop signal while it
  // loads says to resume from it again, not that nothing was saved.
  StopSignalGuard::set_last_checkpoint(dir);
  load_model_weights(dir, *model_, options_.model_files);
  load_optimizer_state(dir, *optimizer_, scheduler_.get());
  // A checkpoint of an fp32 or bf16 run has no scaler: the scale starts afresh.
  if (scaler_ && has_grad_scaler_state(dir)) load_grad_scaler_state(dir, *scaler_);
  TrainerState saved = TrainerState::from_json(read_trainer_state(dir), (fs::path(dir) / kTrainerStateFile).string());
  HEARTH_CHECK(saved.world_size == world_size(), ValueError, "[trainer] ", dir, " was saved by a run of ",
               saved.world_size, " process(es) and this run has ", world_size(),
               "; each process's data position only means the same at the same number: resume with ", saved.world_size,
               " process(es)");
  // The schedule's length comes from this run's arguments; the progress from the checkpoint.
  state_.global_step = saved.global_step;
  state_.epoch = saved.epoch;
  state_.best_metric = saved.best_metric;
  state_.best_global_step = saved.best_global_step;
  state_.best_model_checkpoint = checkpoint_reference(saved.best_model_checkpoint);
  if (!saved.run_id.empty()) state_.run_id = saved.run_id;  // older files have none: this run's stays
  state_.log_history = saved.log_history;
  state_.loss_window = saved.loss_window;
  state_.total_loss = saved.total_loss;
  state_.stateful_callbacks = saved.stateful_callbacks;
  default_generator().set_state(saved.rng_seed, saved.rng_offset);
  loader_->load_state(saved.data_position);
  for (CallbackPtr& cb : callbacks_)
    if (saved.stateful_callbacks.contains(cb->name())) cb->load_state_dict(saved.stateful_callbacks[cb->name()]);
  if (is_main_process()) create_output_dir();
  last_checkpoint_ = dir;
  StopSignalGuard::set_last_checkpoint(dir);
  std::ostringstream os;
  os << "hearth: resuming from " << dir << " at step " << state_.global_step << " (epoch " << number_text(state_.epoch)
     << ")";
  say(os.str());
}

data::DataLoaderOptions Trainer::loader_options(int64_t batch_size) {
  data::DataLoaderOptions lo;
  lo.batch_size = batch_size;
  lo.num_workers = args_.dataloader_num_workers;
  lo.prefetch_factor = args_.dataloader_prefetch_factor.value_or(lo.prefetch_factor);
  lo.collate = options_.collate;
  lo.pin_memory = args_.dataloader_pin_memory && !device_.device.is_cpu();
  lo.device = device_.device;
  image_memory_format_ = nn::runs_channels_last(*model_) ? MemoryFormat::channels_last : MemoryFormat::contiguous;
  lo.image_memory_format = image_memory_format_;
  // A custom forward may read the pixels in float32; the default one hands
  // them to the model, whose first layer casts them under autocast.
  lo.image_dtype =
      !options_.forward && args_.autocast_dtype() == DType::bfloat16 ? DType::bfloat16 : DType::float32;
  return lo;
}

}  // namespace hearth::train
