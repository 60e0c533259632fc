// Gradient clipping by global norm (torch.nn.utils.clip_grad_norm_).
#pragma once

#include <limits>
#include <vector>

#include "hearth/core/tensor.h"

namespace hearth::optim {

// The norm of all gradients taken together (norm_type = p of the p-norm;
// infinity for the largest magnitude). When it exceeds max_norm, every
// gradient is scaled in place by max_norm / (total_norm + 1e-6). Returns the
// norm before clipping as a 0-dim tensor on the gradients' device (float32,
// or float64 for float64 gradients), so no host synchronisation is needed.
// Parameters without a gradient are skipped; with none, the norm is 0.
// error_if_nonfinite reads the norm on the host and throws ValueError when it
// is NaN or infinite, before touching the gradients. Gradients of one dtype on
// one device are clipped in one dispatched call where the backend has it
// (clip_grad_norm_foreach, hearth/optim/functional.h); otherwise, or with
// error_if_nonfinite, from per-gradient norms and scalings.
Tensor clip_grad_norm_(const std::vector<Tensor>& params, double max_norm, double norm_type = 2.0,
                       bool error_if_nonfinite = false);

inline constexpr double kInfNorm = std::numeric_limits<double>::infinity();

}  // namespace hearth::optim
