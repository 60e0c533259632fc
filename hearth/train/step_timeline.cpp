#include "hearth/train/step_timeline.h"

#include <algorithm>
#include <iomanip>
#include <sstream>

namespace hearth::train {

StepTimeline::StepTimeline(Device device) : index_(device.index) {
  if (device.is_cpu()) return;
  DeviceRuntime& rt = device_runtime(device.kind);
  // A runtime without events answers null: nothing is timed.
  if (rt.record_timing_event(device.index) != nullptr) runtime_ = &rt;
}

void StepTimeline::step_begins() {
  if (!runtime_) return;
  steps_.push_back({runtime_->record_timing_event(index_), nullptr, 0});
}

void StepTimeline::step_ends(int64_t samples) {
  if (!runtime_ || steps_.empty() || steps_.back().end) return;
  steps_.back().end = runtime_->record_timing_event(index_);
  steps_.back().samples = samples;
}

std::optional<EpochTiming> StepTimeline::finish_epoch() {
  std::vector<Step> steps;
  steps.swap(steps_);
  const double host_wait = host_wait_seconds_;
  host_wait_seconds_ = 0.0;
  if (!steps.empty() && !steps.back().end) steps.pop_back();  // a step that never ended
  if (!runtime_ || steps.empty()) return std::nullopt;
  EpochTiming t;
  t.steps = static_cast<int64_t>(steps.size());
  t.host_wait_seconds = host_wait;
  for (const Step& s : steps) t.samples += s.samples;
  t.seconds = runtime_->elapsed_ms(*steps.front().begin, *steps.back().end) / 1e3;
  // The begin point of step k+1 is reached as soon as the device finishes
  // step k when the host queued it in time; any later is the device idle.
  for (size_t k = 1; k < steps.size(); ++k)
    t.idle_seconds += std::max(0.0, runtime_->elapsed_ms(*steps[k - 1].end, *steps[k].begin) / 1e3);
  return t;
}

void StepTimeline::discard() { steps_.clear(); }

std::string timing_text(const EpochTiming& t, const std::string& steps_name) {
  std::ostringstream os;
  os << t.steps << " " << steps_name << ", " << t.samples << " samples in " << std::fixed << std::setprecision(2)
     << t.seconds << " s of device time (" << std::setprecision(0) << t.samples_per_second()
     << " samples/s); the device idle " << std::setprecision(1) << 100.0 * t.idle_share()
     << "% of it between steps (waiting for batches or for the host); the host waited " << std::setprecision(2)
     << t.host_wait_seconds << " s for batches";
  return os.str();
}

}  // namespace hearth::train
