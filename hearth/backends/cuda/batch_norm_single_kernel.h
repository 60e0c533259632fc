// Batch norm on CUDA as one kernel each way, for channels-fastest tensors that
// fit in L2 (batch_norm_single_kernel.cu). batch_norm.cu tries it first and
// runs its three kernels (partial sums, per-channel finalize, apply) when it
// declines a call.
#pragma once

#include <cstdint>

#include "hearth/dispatch/op_call.h"

namespace hearth::cuda {

// Whether the single-kernel path may run: on unless
// set_batch_norm_single_kernel_enabled(false) (tests compare both paths in one
// process).
bool batch_norm_single_kernel_enabled();
void set_batch_norm_single_kernel_enabled(bool on);

// How many single-kernel launches (forward and backward) this process has
// made: tests check that a call took the path.
uint64_t batch_norm_single_kernel_launches();

// batch_norm (and its fused forms) and batch_norm_backward as one cooperative
// kernel when the call qualifies (see the size rule in the .cu); false, with
// nothing launched, when it does not.
bool batch_norm_forward_single_kernel(OpCall& call);
bool batch_norm_backward_single_kernel(OpCall& call);

}  // namespace hearth::cuda
