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

GraphedBatchStep::GraphedBatchStep(Device device, Body body, std::vector<Tensor> params, Addresses watched,
                                   std::string replaced_reason)
    : device_(device),
      body_(std::move(body)),
      params_(std::move(params)),
      watched_(std::move(watched)),
      replaced_reason_(std::move(replaced_reason)) {}

const std::string& GraphedBatchStep::fallback_reason() const {
  return reason_.empty() && step_ ? step_->fallback_reason() : reason_;
}

bool GraphedBatchStep::matches_inputs(const data::Batch& batch) const {
  if (inputs_.empty() || batch.size() != inputs_.size()) return false;
  for (const auto& [name, t] : batch) {
    if (!inputs_.contains(name)) return false;
    const Tensor& mine = inputs_.at(name);
    if (mine.shape() != t.shape() || mine.dtype() != t.dtype()) return false;
  }
  return true;
}

void GraphedBatchStep::make_inputs(const data::Batch& batch) {
  inputs_ = data::Batch();
  // In the batch's layout: channels_last images stay so, and the model's
  // convolutions, which follow their input's layout, run NHWC.
  for (const auto& [name, t] : batch)
    inputs_[name] = Tensor::empty(t.shape(), t.dtype(), device_,
                                  t.dim() == 4 ? t.suggest_memory_format() : MemoryFormat::contiguous);
  outputs_.clear();
  recorded_addresses_.clear();
  // A new recording starts: a warm-up call, the rehearsal, then the graph.
  step_ = std::make_unique<GraphedStep>(device_, [this] {
    const std::vector<Tensor> out = body_(inputs_);
    NoGradGuard no_grad;
    // Made in the warm-up call, which is not watched: the recorded step
    // writes into tensors that outlive it but were not made by it.
    if (outputs_.empty()) {
      for (const Tensor& o : out)
        outputs_.push_back(o.defined() ? Tensor::empty(o.shape(), o.dtype(), device_) : Tensor());
    }
    HEARTH_CHECK(out.size() == outputs_.size(), ValueError, "[step graphs] the step gave ", out.size(),
                 " outputs where it gave ", outputs_.size(), " before");
    for (size_t i = 0; i < out.size(); ++i) {
      HEARTH_CHECK(
          out[i].defined() == outputs_[i].defined() && (!out[i].defined() || out[i].shape() == outputs_[i].shape()),
          ValueError, "[step graphs] the step's output ", i, " changed shape between calls on batches of one shape");
      if (out[i].defined()) outputs_[i].copy_(out[i]);
    }
  });
}

std::vector<Tensor> GraphedBatchStep::operator()(const data::Batch& batch, bool may_record) {
  if (!fallback_reason().empty()) return body_(batch);
  if (inputs_.empty() && may_record) make_inputs(batch);
  if (!matches_inputs(batch)) {
    ++other_shapes_;
    return body_(batch);
  }
  if (watched_memory_moved()) {
    reason_ = replaced_reason_;
    step_.reset();
    return body_(batch);
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
    if (recorded_addresses_.empty()) recorded_addresses_ = watched_();
    ++replayed_;
  }
  // The next step overwrites the outputs; the caller keeps these.
  std::vector<Tensor> out;
  out.reserve(outputs_.size());
  for (const Tensor& o : outputs_) out.push_back(o.defined() ? o.clone() : Tensor());
  return out;
}

std::vector<const void*> parameter_and_gradient_addresses(const std::vector<Tensor>& params) {
  std::vector<const void*> out;
  out.reserve(2 * params.size());
  for (const Tensor& p : params) {
    out.push_back(p.data_ptr());
    const Tensor g = p.grad();
    out.push_back(g.defined() ? g.data_ptr() : nullptr);
  }
  return out;
}

GraphedTrainingStep::GraphedTrainingStep(Device device, ForwardBackward forward_backward, std::vector<Tensor> params)
    : step_(
          device,
          [fb = std::move(forward_backward)](const data::Batch& batch) { return std::vector<Tensor>{fb(batch)}; },
          params, [params] { return parameter_and_gradient_addresses(params); },
          "the parameters or their gradients were replaced after the step was recorded (gradients set to none, or "
          "weights put into new tensors), so the recorded step would update tensors the model no longer uses") {}

}  // namespace hearth::train
