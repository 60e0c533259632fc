// How much device memory training a model takes at a batch size, for
// `hearth estimate-memory`: parameters, gradients, optimizer state and
// activations, and the peak they make together.
//
// Method: a real training step of the model runs on the CPU, with the CPU
// allocator's accounting (hearth/core/cpu_runtime.h) measuring
//   - the gradients one backward pass creates, and the optimizer's state one
//     update creates;
//   - with the gradients already there (so that they do not blur the rest),
//     at two small batch sizes (2 and 4 by default: batch normalisation
//     needs two samples): the bytes the forward pass
//     leaves held until backward (the tensors autograd saved: the
//     activations), and the high-water mark of forward plus backward above
//     them (activations and the backward pass's temporaries).
// Activations and the high-water mark are fitted as fixed + per_sample * batch
// through the two measurements and evaluated at the batch asked for: every
// activation of these models grows linearly with the batch. The total adds
// the parts, which is what a step holds at its peak when the gradients of the
// previous step are kept (zero_grad without set_to_none); dropping them
// between steps lowers the real peak somewhat. Mixed precision (bf16-mixed,
// fp16-mixed) is estimated from the fp32 measurement: activations and
// temporaries in 2-byte types (half), plus a 2-byte copy of the weights; fp32
// master weights, gradients and optimizer state are unchanged.
// Not counted: the allocator's caching and fragmentation, cuDNN/cuBLAS
// workspaces and the CUDA context, which a device's measured peak includes.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>

#include "hearth/core/tensor.h"

namespace hearth::cli {

// A model's training step, in the pieces the estimator measures separately.
struct TrainingStepProbe {
  std::function<void(int64_t batch)> make_batch;  // creates the inputs: a batch of this size
  std::function<void()> drop_batch;               // frees them
  std::function<Tensor()> forward_loss;           // forward and loss, autograd graph alive
  std::function<void()> optimizer_step;           // one update (creates the optimizer's state)
  std::function<void()> zero_grad;                // drops the gradients (set to none)
  int64_t parameters = 0;                         // numel of the trainable parameters
};

struct StepMeasurement {
  int64_t batch = 0;
  size_t inputs = 0;  // the batch's tensors
  size_t saved = 0;   // held from the end of forward until backward
  size_t peak = 0;    // high-water mark of forward + backward above the model, its gradients and the inputs
};

struct MemoryEstimate {
  int64_t batch_size = 0;
  std::string precision;
  size_t parameters = 0, gradients = 0, optimizer_state = 0, weight_copies = 0;
  size_t inputs = 0, activations = 0, temporaries = 0;
  double activations_per_sample = 0;
  size_t total = 0;              // the sum of the parts: the step's expected high-water mark
  StepMeasurement small, large;  // the two measured steps
};

// Runs one forward and backward pass at `batch` so that the gradients exist;
// returns the bytes they hold.
size_t create_gradients(const TrainingStepProbe& probe, int64_t batch = 2);
// Measures one step at `batch` on the CPU (the probe's model must be there,
// its gradients created).
StepMeasurement measure_training_step(const TrainingStepProbe& probe, int64_t batch);
// Measures the gradients, the steps at batches a < b and the optimizer state,
// and scales to `batch_size`. Leaves the gradients dropped.
MemoryEstimate estimate_training_memory(const TrainingStepProbe& probe, int64_t batch_size,
                                        const std::string& precision, int64_t small_batch = 2, int64_t large_batch = 4);

}  // namespace hearth::cli
