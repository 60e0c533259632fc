// Checks and small helpers shared by the nn ops (batch_norm, layer_norm,
// softmax, losses, embedding, dropout). Internal to hearth/ops.
#pragma once

#include <string>

#include "hearth/core/tensor.h"

namespace hearth::detail {

// The dtype statistics and per-row losses are kept in: float32 for the half
// types (their 8- or 11-bit mantissas cannot hold a running sum), else the dtype.
inline DType acc_dtype(DType t) { return is_half_type(t) ? DType::float32 : t; }

// An optional per-channel parameter (weight, bias, running statistic): when
// defined it must be 1-D of `size` elements, on x's device, of x's dtype or,
// for half x, float32 (mixed precision keeps parameters in float32).
void check_channel_param(const char* op, const Tensor& p, const char* arg, int64_t size, const Tensor& x);
// The dtype and device half of check_channel_param, for parameters of any shape.
void check_param_dtype_device(const char* op, const Tensor& p, const char* arg, const Tensor& x);

// A contiguous tensor with the same values, cut from the graph: what kernels read.
Tensor dense_detached(const Tensor& t);

enum class Reduction { none, mean, sum };
Reduction parse_reduction(const char* op, const std::string& reduction);

}  // namespace hearth::detail
