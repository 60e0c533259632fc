#include "hearth/train/graphed_step.h"

#include "hearth/core/errors.h"

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

}  // namespace hearth::train
