// Turning a list of samples into one batch.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "hearth/data/dataset.h"

namespace hearth::data {

using CollateFn = std::function<Batch(std::vector<Example> samples)>;
// Gives the uninitialised contiguous CPU tensor a batch field is stacked into
// (the DataLoader's reused or page-locked batch memory).
using BatchTensorFactory = std::function<Tensor(const Shape& shape, DType dtype)>;

// PyTorch's default_collate for tensors: each field's tensors, which must share
// shape and dtype, are stacked along a new leading dimension into one
// contiguous CPU tensor (samples of shape [] become [B]; [1, 28, 28] becomes
// [B, 1, 28, 28]). Every sample must have the same fields.
Batch default_collate(std::vector<Example> samples);

// A 1-D int64 tensor of `values` (a sample's token ids, its mask, its labels).
Tensor int64_row(const std::vector<int64_t>& values);
// `row` [n] int64, extended at its end to `length` with `value`: how the
// padding collations (text classification, causal LM) pad each field.
Tensor pad_int64_row(const Tensor& row, int64_t length, int64_t value);
// The same, each field stacked into a tensor from `make_output`.
Batch default_collate_into(std::vector<Example> samples, const BatchTensorFactory& make_output);

// The stacking itself, by byte copies (non-contiguous samples are gathered,
// samples on other devices are brought to the CPU first). `field` names the
// tensors in error messages.
Tensor stack_samples(const std::vector<Tensor>& samples, const std::string& field = "tensor");
Tensor stack_samples_into(const std::vector<Tensor>& samples, const std::string& field,
                          const BatchTensorFactory& make_output);

}  // namespace hearth::data
