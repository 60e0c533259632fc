#include "hearth/train/step_graph.h"

#include "hearth/autograd/grad_mode.h"
#include "hearth/core/errors.h"
#include "hearth/ops/elementwise.h"
#include "hearth/ops/param_half_copies.h"

namespace hearth::train {

GraphedStep::GraphedStep(Device device, std::function<void()> step, int eager_calls)
    : device_(device), step_(std::move(step)), eager_left_(eager_calls) {}

void GraphedStep::operator()() {
  if (graph_) {
    graph_->replay();
    return;
  }
  if (!reason_.empty() || eager_left_ > 0) {
    if (eager_left_ > 0) --eager_left_;
    step_();
    return;
  }
  DeviceRuntime& rt = device_runtime(device_.kind);
  if (device_.is_cpu() || !rt.supports_step_graphs()) {
    reason_ = device_.str() + " has no step graphs (they are a CUDA feature)";
    step_();
    return;
  }
  if (!rehearsed_) {
    rehearsed_ = true;
    reason_ = rt.rehearse_step(device_.index, step_);  // this call's step, run eagerly
    return;
  }
  try {
    graph_ = rt.capture_step(device_.index, step_);
  } catch (const Error& e) {
    reason_ = e.what();
    step_();
    return;
  }
  // The blocks the eager steps left cached: the graph has memory of its own.
  rt.empty_cache(device_.index);
  graph_->replay();
}

GraphedTrainingStep::GraphedTrainingStep(Device device, ForwardBackward forward_backward, std::vector<Tensor> params)
    : device_(device), forward_backward_(std::move(forward_backward)), params_(std::move(params)) {}

const std::string& GraphedTrainingStep::fallback_reason() const {
  return reason_.empty() && step_ ? step_->fallback_reason() : reason_;
}

bool GraphedTrainingStep::matches_inputs(const data::Batch& batch) const {
  if (inputs_.empty() || batch.size() != inputs_.size()) return false;
  for (const auto& [name, t] : batch) {
    if (!inputs_.contains(name)) return false;
    const Tensor& mine = inputs_.at(name);
    if (mine.shape() != t.shape() || mine.dtype() != t.dtype()) return false;
  }
  return true;
}

void GraphedTrainingStep::make_inputs(const data::Batch& batch) {
  inputs_ = data::Batch();
  // In the batch's layout: channels_last images stay so, and the model's
  // convolutions, which follow their input's layout, run NHWC.
  for (const auto& [name, t] : batch)
    inputs_[name] = Tensor::empty(t.shape(), t.dtype(), device_,
                                  t.dim() == 4 ? t.suggest_memory_format() : MemoryFormat::contiguous);
  recorded_addresses_.clear();
  // A new recording starts: a warm-up call, the rehearsal, then the graph.
  step_ = std::make_unique<GraphedStep>(device_, [this] {
    const Tensor loss = forward_backward_(inputs_);
    NoGradGuard no_grad;
    // Made in the warm-up call, which is not watched: the recorded step
    // writes into a tensor that outlives it but was not made by it.
    if (!loss_.defined()) loss_ = Tensor::empty({}, loss.dtype(), device_);
    loss_.copy_(loss.reshape({}));
  });
}

std::vector<const void*> GraphedTrainingStep::addresses() const {
  std::vector<const void*> out;
  out.reserve(2 * params_.size());
  for (const Tensor& p : params_) {
    out.push_back(p.data_ptr());
    const Tensor g = p.grad();
    out.push_back(g.defined() ? g.data_ptr() : nullptr);
  }
  return out;
}

Tensor GraphedTrainingStep::operator()(const data::Batch& batch, bool may_record) {
  if (!fallback_reason().empty()) return forward_backward_(batch);
  if (inputs_.empty() && may_record) make_inputs(batch);
  if (!matches_inputs(batch)) {
    ++other_shapes_;
    return forward_backward_(batch);
  }
  if (replaying() && addresses() != recorded_addresses_) {
    reason_ =
        "the parameters or their gradients were replaced after the step was recorded (gradients set to none, or "
        "weights put into new tensors), so the recorded step would update tensors the model no longer uses";
    step_.reset();
    return forward_backward_(batch);
  }
  {
    NoGradGuard no_grad;
    // Queued before the step, on the device's queue: the previous replay has
    // read the inputs by the time this copy overwrites them.
    for (const auto& [name, t] : batch) copy_(inputs_.at(name), t);
  }
  // The recorded forward reads the parameters' low-precision copies without
  // autocast's check that they still match: rewrite those a write outside
  // the optimizer (a loaded state dict) left stale.
  if (step_->replaying()) refresh_param_half_copies(params_);
  (*step_)();
  if (step_->replaying()) {
    if (recorded_addresses_.empty()) recorded_addresses_ = addresses();
    ++replayed_;
  }
  // The next step overwrites loss_; the caller keeps this one.
  return loss_.clone();
}

}  // namespace hearth::train
