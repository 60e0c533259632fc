// Joining, splitting and index-based gathering.
#pragma once

#include <vector>

#include "hearth/core/tensor.h"

namespace hearth {

Tensor cat(const std::vector<Tensor>& tensors, int64_t dim = 0);
Tensor stack(const std::vector<Tensor>& tensors, int64_t dim = 0);
std::vector<Tensor> split(const Tensor& a, int64_t split_size, int64_t dim = 0);
std::vector<Tensor> split(const Tensor& a, const std::vector<int64_t>& sizes, int64_t dim = 0);
std::vector<Tensor> chunk(const Tensor& a, int64_t chunks, int64_t dim = 0);
// Index checks: index_select, gather, scatter_add(_) and one_hot raise a
// ValueError at the call for an out-of-range index when the index is on the
// CPU. On an accelerator, checking would wait for the device on every call, so
// the kernel skips out-of-range entries instead (reads give NaN or 0, additions
// are dropped) and the next indexing call on that device raises the error.
// Set HEARTH_CHECK_INDICES=1 to check on the host for every device (slower),
// which raises at the offending call. one_hot with num_classes = -1 reads the
// index to infer the count, so it always checks.
Tensor index_select(const Tensor& a, int64_t dim, const Tensor& index);
Tensor gather(const Tensor& a, int64_t dim, const Tensor& index);
// a with src added at index along dim (out of place; scatter_add_ in place).
Tensor scatter_add(const Tensor& a, int64_t dim, const Tensor& index, const Tensor& src);
const Tensor& scatter_add_(const Tensor& a, int64_t dim, const Tensor& index, const Tensor& src);
// out[i] = value at one-hot position (num_classes from the max when -1).
Tensor one_hot(const Tensor& index, int64_t num_classes = -1);

}  // namespace hearth
