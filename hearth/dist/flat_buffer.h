// Coalescing: many tensors of one dtype and device copied into one flat
// buffer, so a list costs one collective, and copied back afterwards.
#pragma once

#include <vector>

#include "hearth/core/tensor.h"

namespace hearth::dist {

// A contiguous 1-d tensor holding the tensors' elements one after another.
Tensor flatten_tensors(const std::vector<Tensor>& tensors);
// Copies consecutive slices of `flat` back into the tensors (in place).
void unflatten_into(const Tensor& flat, const std::vector<Tensor>& tensors);
// The tensors' total number of elements.
int64_t total_numel(const std::vector<Tensor>& tensors);

}  // namespace hearth::dist
