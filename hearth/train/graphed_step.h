// A step run as a recorded device graph where it can be (CUDA graphs, see
// DeviceRuntime::StepGraph): eagerly for the first calls (plans, autotuning
// and state made on first use), then once eagerly under watch (the
// rehearsal), then recorded once and replayed at every later call, one launch
// instead of hundreds. A step that cannot be recorded keeps running eagerly
// and fallback_reason() says why, so the caller can tell the user once.
#pragma once

#include <functional>
#include <memory>
#include <string>

#include "hearth/core/device.h"
#include "hearth/core/device_runtime.h"

namespace hearth::train {

class GraphedStep {
 public:
  // `eager_calls`: calls run eagerly before the rehearsal.
  GraphedStep(Device device, std::function<void()> step, int eager_calls = 1);
  // Runs the step once: eagerly, rehearsed, or by queuing the recorded graph.
  void operator()();
  bool replaying() const { return graph_ != nullptr; }
  // Why the step runs eagerly for good; empty while it may still be recorded or is.
  const std::string& fallback_reason() const { return reason_; }

 private:
  Device device_;
  std::function<void()> step_;
  int eager_left_;
  bool rehearsed_ = false;
  std::unique_ptr<DeviceRuntime::StepGraph> graph_;
  std::string reason_;
};

}  // namespace hearth::train
