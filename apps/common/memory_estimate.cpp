#include "apps/common/memory_estimate.h"

#include <algorithm>
#include <cmath>

#include "hearth/core/device_runtime.h"
#include "hearth/core/errors.h"

namespace hearth::cli {
namespace {

DeviceRuntime& cpu() { return device_runtime(kCpu); }
size_t active() { return cpu().memory_stats(0).active; }

size_t diff(size_t a, size_t b) { return a > b ? a - b : 0; }

// fixed + per_sample * batch through the two measurements, never below zero.
double fit(double small_value, double large_value, int64_t a, int64_t b, int64_t batch, double* per_sample) {
  double slope = (large_value - small_value) / static_cast<double>(b - a);
  if (per_sample) *per_sample = slope;
  return std::max(0.0, small_value + slope * static_cast<double>(batch - a));
}

}  // namespace

size_t create_gradients(const TrainingStepProbe& probe, int64_t batch) {
  probe.zero_grad();
  probe.make_batch(batch);
  const size_t before = active();
  {
    Tensor loss = probe.forward_loss();
    loss.backward();
  }
  const size_t grads = diff(active(), before);
  probe.drop_batch();
  return grads;
}

StepMeasurement measure_training_step(const TrainingStepProbe& probe, int64_t batch) {
  StepMeasurement m;
  m.batch = batch;
  probe.drop_batch();
  const size_t before_inputs = active();
  probe.make_batch(batch);
  const size_t base = active();
  m.inputs = diff(base, before_inputs);
  cpu().reset_peak_memory_stats(0);
  {
    Tensor loss = probe.forward_loss();
    m.saved = diff(active(), base);
    loss.backward();
  }
  m.peak = diff(cpu().memory_stats(0).peak_active, base);
  probe.drop_batch();
  return m;
}

MemoryEstimate estimate_training_memory(const TrainingStepProbe& probe, int64_t batch_size,
                                        const std::string& precision, int64_t small_batch, int64_t large_batch) {
  HEARTH_CHECK(small_batch >= 1 && large_batch > small_batch && batch_size >= 1, ValueError,
               "[estimate-memory] expected 1 <= small batch < large batch and a batch size >= 1, got ", small_batch,
               ", ", large_batch, " and ", batch_size);
  HEARTH_CHECK(precision == "fp32" || precision == "bf16-mixed" || precision == "fp16-mixed", ValueError,
               "[estimate-memory] precision: expected fp32, bf16-mixed or fp16-mixed, got \"", precision, "\"");
  MemoryEstimate e;
  e.batch_size = batch_size;
  e.precision = precision;
  e.gradients = create_gradients(probe, small_batch);
  e.small = measure_training_step(probe, small_batch);
  e.large = measure_training_step(probe, large_batch);
  // The optimizer's state: what one update adds (the gradients are already there).
  const size_t before_step = active();
  probe.optimizer_step();
  e.optimizer_state = diff(active(), before_step);
  probe.zero_grad();

  e.parameters = static_cast<size_t>(probe.parameters) * 4;
  const int64_t a = small_batch, b = large_batch;
  e.inputs = static_cast<size_t>(
      fit(static_cast<double>(e.small.inputs), static_cast<double>(e.large.inputs), a, b, batch_size, nullptr));
  double activations = fit(static_cast<double>(e.small.saved), static_cast<double>(e.large.saved), a, b, batch_size,
                           &e.activations_per_sample);
  double peak = fit(static_cast<double>(e.small.peak), static_cast<double>(e.large.peak), a, b, batch_size, nullptr);
  double temporaries = std::max(0.0, peak - activations);
  if (precision != "fp32") {
    // Activations and temporaries in 2-byte types; gradients stay fp32; a
    // 2-byte copy of each weight is made for the forward pass.
    activations /= 2;
    temporaries /= 2;
    e.activations_per_sample /= 2;
    e.weight_copies = static_cast<size_t>(probe.parameters) * 2;
  }
  e.activations = static_cast<size_t>(activations);
  e.temporaries = static_cast<size_t>(temporaries);
  e.total = e.parameters + e.gradients + e.optimizer_state + e.weight_copies + e.inputs + e.activations + e.temporaries;
  return e;
}

}  // namespace hearth::cli
