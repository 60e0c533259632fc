// Before a run allocates its gradients and optimizer state: whether what
// training holds besides the activations (the parameters, one gradient per
// parameter, the optimizer's state) fits in the device's memory. A model whose
// parameters alone fit can still need four times their size to train; without
// this check it failed deep inside an allocation, after setup.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "hearth/core/device.h"
#include "hearth/core/tensor.h"

namespace hearth::train {

struct TrainingMemory {
  size_t parameters = 0;
  size_t gradients = 0;
  size_t optimizer_state = 0;
  size_t total() const { return parameters + gradients + optimizer_state; }
};

// The bytes `params` hold and will hold once training with `optim`
// ("adamw_torch" or "adam": two moments per parameter; "sgd": momentum, one).
TrainingMemory training_memory(const std::vector<Tensor>& params, const std::string& optim);

// The memory of `device`: its total as its runtime reports it; for the CPU
// (or a runtime that reports none) the machine's physical memory, lowered to
// this process's cgroup limit when one is set. 0 when unknown.
size_t device_memory_bytes(Device device);

// OutOfMemoryError "[trainer] ..." saying what training would hold, part by
// part, and the device's memory, when the first exceeds the second.
void check_training_memory_fits(const TrainingMemory& need, size_t available, const std::string& device_name);

}  // namespace hearth::train
