// The Trainer's optimizer step: gradient accumulation over micro-batches
// (with the data-parallel reducer on the last one), clipping, the optimizer
// and scheduler, and the training-loss window that the log and the NaN check
// read without a host synchronisation per step.
#include <cmath>
#include <numeric>
#include <sstream>

#include "hearth/autograd/grad_mode.h"
#include "hearth/core/device_runtime.h"
#include "hearth/distributed/gradient_reducer.h"
#include "hearth/ops/elementwise.h"
#include "hearth/ops/factory.h"
#include "hearth/optim/clip_grad.h"
#include "hearth/train/step_graph.h"
#include "hearth/train/trainer.h"

namespace hearth::train {

using json = nlohmann::json;

namespace {

// Rows [start, start + n) of every field that has the batch's rows.
data::Batch slice_batch(const data::Batch& batch, int64_t start, int64_t n, int64_t rows) {
  data::Batch out;
  for (const auto& [name, t] : batch) out[name] = t.dim() > 0 && t.size(0) == rows ? t.narrow(0, start, n) : t;
  return out;
}

}  // namespace

Tensor Trainer::accumulate_gradients(const std::vector<data::Batch>& group, int64_t samples) {
  Tensor step_loss;
  for (size_t i = 0; i < group.size(); ++i) {
    const data::Batch& full = group[i];
    const int64_t rows = full.at(data::field::kLabels).size(0);
    // Batches larger than micro_batch_size_ (after an out-of-memory retry) go through in slices.
    for (int64_t start = 0; start < rows; start += micro_batch_size_) {
      const int64_t n = std::min(micro_batch_size_, rows - start);
      // Only the step's last backward averages gradients over ranks; the
      // earlier ones accumulate locally (DDP's no_sync).
      if (reducer_) reducer_->prepare_for_backward(/*sync=*/i + 1 == group.size() && start + n == rows);
      Tensor loss;
      {
        std::optional<AutocastGuard> autocast = autocast_scope();
        loss = run_forward(n == rows ? full : slice_batch(full, start, n, rows)).loss.reshape({});
      }
      // Each slice's mean weighted by its share of the step's samples: the sum
      // of the scaled losses is the mean over all of them, as one large batch.
      if (n != samples) loss = mul(loss, static_cast<double>(n) / static_cast<double>(samples));
      (scaler_ ? scaler_->scale(loss) : loss).backward();
      Tensor value = loss.detach();
      step_loss = step_loss.defined() ? add(step_loss, value) : value;
    }
  }
  return step_loss;
}

void Trainer::training_step(std::vector<data::Batch>& group) {
  int64_t samples = 0;
  for (const data::Batch& b : group) samples += b.at(data::field::kLabels).size(0);
  Tensor step_loss;
  while (true) {
    try {
      // With step graphs the group is one batch (no accumulation, no slices).
      step_loss = step_graphs_ ? graphed_forward_backward(group.front()) : accumulate_gradients(group, samples);
      break;
    } catch (const OutOfMemoryError& e) {
      // Only the forward and backward passes are retried: they change nothing
      // but the gradients, which are cleared. An optimizer step that runs out
      // of memory may have updated some parameters, so it is not.
      // Under data parallelism another rank may be waiting in an all-reduce
      // of this step: retrying alone would leave it there.
      if (!args_.auto_find_batch_size || micro_batch_size_ <= 1 || reducer_) throw;
      optimizer_->zero_grad();
      if (step_graphs_) stop_step_graphs("batches run in slices after running out of memory");
      eval_graph_.reset();  // the recorded evaluation's memory too; it is recorded again when next needed
      device_runtime(device_.device.kind).empty_cache(device_.device.index);
      const int64_t before = micro_batch_size_;
      micro_batch_size_ = (micro_batch_size_ + 1) / 2;
      const int64_t slices = (args_.per_device_train_batch_size + micro_batch_size_ - 1) / micro_batch_size_;
      std::ostringstream os;
      os << "hearth: out of memory at step " << state_.global_step + 1 << " with a batch of " << before << " on "
         << device_.device.str() << "; auto_find_batch_size: retrying with batches of " << micro_batch_size_ << " and "
         << slices * args_.gradient_accumulation_steps << " gradient accumulation steps (still "
         << state_.train_batch_size << " samples per optimizer step). (" << e.what() << ")";
      say(os.str());
    }
  }
  if (reducer_) {
    reducer_->finish();
    group_->all_reduce({step_loss}, distributed::ReduceOp::avg)->wait();  // the mean over ranks is logged
  }
  updating_parameters_ = true;
  optimizer_step();

  ++state_.global_step;
  updating_parameters_ = false;
  data::DataLoaderState pos = loader_->state();
  state_.epoch = static_cast<double>(pos.epoch) +
                 static_cast<double>(pos.batches_yielded) / static_cast<double>(loader_->num_batches());
  state_.step_loss = step_loss;
  record_step_loss(step_loss);
  // The step could not be recorded (the rehearsal saw it read the host, ...):
  // it ran eagerly, and so will the rest.
  if (step_graphs_ && !step_graphs_->fallback_reason().empty()) stop_step_graphs(step_graphs_->fallback_reason());
}

std::optional<AutocastGuard> Trainer::autocast_scope() const {
  const std::optional<DType> dtype = args_.autocast_dtype();
  if (!dtype) return std::nullopt;
  return std::optional<AutocastGuard>(std::in_place, device_.device.kind, *dtype);
}

void Trainer::optimizer_step() {
  // Clipping compares the true gradients with max_grad_norm.
  if (scaler_) scaler_->unscale_(*optimizer_);
  grad_norm_ = args_.max_grad_norm > 0 ? optim::clip_grad_norm_(params_, args_.max_grad_norm) : Tensor();
  bool stepped = true;
  if (scaler_) {
    stepped = scaler_->step(*optimizer_);
    scaler_->update();
  } else {
    optimizer_->step();
  }
  // A step skipped for an overflow leaves the schedule where it was, as
  // Hugging Face's Trainer does.
  if (stepped) scheduler_->step();
  // A recorded step writes the gradients where they were when it was
  // recorded: they are kept, and zeroed in place at the next step's start.
  if (!step_graphs_) optimizer_->zero_grad();
}

void Trainer::record_step_loss(const Tensor& loss) {
  if (!loss_window_.defined() || loss_window_.dtype() != loss.dtype()) {
    flush_loss_window();
    loss_window_ = Tensor::empty({args_.logging_steps}, loss.dtype(), device_.device);
  }
  if (window_count_ == loss_window_.size(0)) flush_loss_window();
  loss_window_.narrow(0, window_count_, 1).copy_(loss.reshape({1}));
  ++window_count_;
  // Reading a CPU tensor costs nothing, so a non-finite loss stops at once there.
  if (device_.device.is_cpu()) flush_loss_window();
}

void Trainer::flush_loss_window() {
  if (window_count_ == 0) return;
  std::vector<double> values = loss_window_.narrow(0, 0, window_count_).to(DType::float64).cpu().to_vector<double>();
  const int64_t first_step = state_.global_step - window_count_ + 1;
  window_count_ = 0;
  for (size_t i = 0; i < values.size(); ++i) {
    if (std::isfinite(values[i])) continue;
    std::ostringstream os;
    os << "[trainer] the loss is " << (std::isnan(values[i]) ? "nan" : "inf") << " at step "
       << first_step + static_cast<int64_t>(i) << " (epoch " << state_.epoch
       << "); training stopped. Lower the learning_rate, clip gradients with max_grad_norm, or check the data for "
          "non-finite values.";
    if (!last_checkpoint_.empty()) os << " The last checkpoint is " << last_checkpoint_ << ".";
    throw ValueError(os.str());
  }
  state_.loss_window.insert(state_.loss_window.end(), values.begin(), values.end());
}

void Trainer::log_training_loss() {
  flush_loss_window();
  last_log_step_ = state_.global_step;
  if (state_.loss_window.empty()) return;
  const double sum = std::accumulate(state_.loss_window.begin(), state_.loss_window.end(), 0.0);
  json entry;
  entry["loss"] = sum / static_cast<double>(state_.loss_window.size());
  state_.total_loss += sum;
  state_.loss_window.clear();
  if (grad_norm_.defined()) entry["grad_norm"] = grad_norm_.item<double>();
  entry["learning_rate"] = scheduler_->get_last_lr().at(0);
  entry.update(entry_at_step());
  log(std::move(entry));
}

}  // namespace hearth::train
