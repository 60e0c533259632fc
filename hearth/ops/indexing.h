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
Tensor index_select(const Tensor& a, int64_t dim, const Tensor& index);
Tensor gather(const Tensor& a, int64_t dim, const Tensor& index);
// a with src added at index along dim (out of place; scatter_add_ in place).
Tensor scatter_add(const Tensor& a, int64_t dim, const Tensor& index, const Tensor& src);
const Tensor& scatter_add_(const Tensor& a, int64_t dim, const Tensor& index, const Tensor& src);
// out[i] = value at one-hot position (num_classes from the max when -1).
Tensor one_hot(const Tensor& index, int64_t num_classes = -1);

}  // namespace hearth
