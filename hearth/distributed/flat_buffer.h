// Coalescing: many tensors of one dtype and device copied into one flat
// buffer, so a list costs one collective, and copied back afterwards.
#pragma once

#include <vector>

#include "hearth/core/tensor.h"

namespace hearth::distributed {

// A contiguous 1-d tensor holding the tensors' elements one after another.
Tensor flatten_tensors(const std::vector<Tensor>& tensors);
// Copies consecutive slices of `flat` back into the tensors (in place).
void unflatten_into(const Tensor& flat, const std::vector<Tensor>& tensors);

// Gradient buckets: each tensor's elements in its own memory order (a
// channels_last gradient is copied as it lies, not transposed to NCHW), one
// after another; view_in_format(flat, offset, like) is the view of the
// elements from `offset` laid out as `like` (same shape and memory format),
// so a parameter's .grad keeps the parameter's layout.
Tensor flatten_in_memory_order(const std::vector<Tensor>& tensors);
Tensor view_in_format(const Tensor& flat, int64_t offset, const Tensor& like);
// The tensors' total number of elements.
int64_t total_numel(const std::vector<Tensor>& tensors);

}  // namespace hearth::distributed
