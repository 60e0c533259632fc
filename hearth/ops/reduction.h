// Reductions along any set of dims (empty dims = all), with keepdim; plus scans
// and sorting.
#pragma once

#include <utility>
#include <vector>

#include "hearth/core/tensor.h"

namespace hearth {

Tensor sum(const Tensor& a, const std::vector<int64_t>& dims = {}, bool keepdim = false);
Tensor mean(const Tensor& a, const std::vector<int64_t>& dims = {}, bool keepdim = false);
// Values only; with a dim use max_dim for (values, indices).
Tensor amax(const Tensor& a, const std::vector<int64_t>& dims = {}, bool keepdim = false);
Tensor amin(const Tensor& a, const std::vector<int64_t>& dims = {}, bool keepdim = false);
std::pair<Tensor, Tensor> max_dim(const Tensor& a, int64_t dim, bool keepdim = false);
std::pair<Tensor, Tensor> min_dim(const Tensor& a, int64_t dim, bool keepdim = false);
Tensor argmax(const Tensor& a, int64_t dim, bool keepdim = false);
Tensor argmin(const Tensor& a, int64_t dim, bool keepdim = false);
// Variance with Bessel's correction `correction` (1 = unbiased, as torch.var).
Tensor var(const Tensor& a, const std::vector<int64_t>& dims = {}, int64_t correction = 1, bool keepdim = false);
Tensor std(const Tensor& a, const std::vector<int64_t>& dims = {}, int64_t correction = 1, bool keepdim = false);
// p-norm (p = 2 default; p = inf for max-abs).
Tensor norm(const Tensor& a, double p = 2.0, const std::vector<int64_t>& dims = {}, bool keepdim = false);

Tensor cumsum(const Tensor& a, int64_t dim);
// k largest (or smallest) along dim: (values, int64 indices), sorted when `sorted`.
std::pair<Tensor, Tensor> topk(const Tensor& a, int64_t k, int64_t dim = -1, bool largest = true, bool sorted = true);
// Stable sort along dim: (values, int64 indices).
std::pair<Tensor, Tensor> sort(const Tensor& a, int64_t dim = -1, bool descending = false);

}  // namespace hearth
