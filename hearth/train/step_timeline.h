// Where an epoch's training time goes: the device's time from the epoch's
// first training step to its last, and how much of it the device sat idle
// between steps (waiting for the next batch, or for the host to queue the
// step). Evaluation and checkpoints between epochs are outside both, so an
// epoch's rate is the steady training rate a user compares with `hearth bench`.
// An evaluation is timed the same way, its forward passes as its steps: the
// wait for its first batch (the loader's start) falls outside, so its rate is
// the steady one too.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "hearth/core/device.h"
#include "hearth/core/device_runtime.h"

namespace hearth::train {

struct EpochTiming {
  int64_t steps = 0;
  int64_t samples = 0;
  double seconds = 0.0;       // device time from the first step's start to the last step's end
  double idle_seconds = 0.0;  // device time between one step's end and the next one's start
  double host_wait_seconds = 0.0;  // host time spent waiting for batches, as reported with host_waited()
  double samples_per_second() const { return seconds > 0 ? static_cast<double>(samples) / seconds : 0.0; }
  double idle_share() const { return seconds > 0 ? idle_seconds / seconds : 0.0; }
};

// "390 training steps, 49920 samples in 9.00 s of device time (5547
// samples/s); the device idle 4.2% of it between steps (waiting for batches or
// for the host); the host waited 0.35 s for batches". `steps_name` names the
// steps ("training steps", "evaluation steps").
std::string timing_text(const EpochTiming& t, const std::string& steps_name);

class StepTimeline {
 public:
  // Times nothing on devices without timing events (the CPU runs each op
  // before returning, so its idle time is the host's and not measured here).
  explicit StepTimeline(Device device);
  bool active() const { return runtime_ != nullptr; }

  // Around each training step, outside any recorded step graph: a point in
  // the device's queue once the step's batch is at hand, and one after the
  // step's work is queued.
  void step_begins();
  void step_ends(int64_t samples);
  // Host time spent waiting for the loader's next batch: beside the device's
  // idle time, it tells an input-bound run (the wait is most of the idle
  // time) from a host-bound one. Counted on every device, the CPU included.
  void host_waited(double seconds) { host_wait_seconds_ += seconds; }

  // Sums the epoch's steps (waits for the last one's end) and starts the next
  // epoch (the host's wait starts again from 0 too); nullopt when nothing was
  // timed.
  std::optional<EpochTiming> finish_epoch();
  // Forgets the current epoch's steps (a step that failed, a resumed run).
  void discard();

 private:
  struct Step {
    std::shared_ptr<DeviceRuntime::TimingEvent> begin, end;
    int64_t samples = 0;
  };
  DeviceRuntime* runtime_ = nullptr;
  int index_ = 0;
  std::vector<Step> steps_;
  double host_wait_seconds_ = 0.0;
};

}  // namespace hearth::train
