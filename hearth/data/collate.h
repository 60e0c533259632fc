// Turning a list of samples into one batch.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "hearth/data/dataset.h"

namespace hearth::data {

using CollateFn = std::function<Batch(std::vector<Example> samples)>;

// PyTorch's default_collate for tensors: each field's tensors, which must share
// shape and dtype, are stacked along a new leading dimension into one
// contiguous CPU tensor (samples of shape [] become [B]; [1, 28, 28] becomes
// [B, 1, 28, 28]). Every sample must have the same fields.
Batch default_collate(std::vector<Example> samples);

// The stacking itself, by byte copies (non-contiguous samples are gathered,
// samples on other devices are brought to the CPU first). `field` names the
// tensors in error messages.
Tensor stack_samples(const std::vector<Tensor>& samples, const std::string& field = "tensor");

}  // namespace hearth::data
