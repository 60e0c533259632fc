// Internal to hearth/ops: how scaled_dot_product_attention hands a call to
// fused_attention (hearth/ops/fused_attention.cpp).
#pragma once

#include <optional>

#include "hearth/core/tensor.h"

namespace hearth::detail {

// fused_attention's output when the fused path is on (HEARTH_FUSED_ATTENTION)
// and the device's kernel takes this call, forward and, where the output will
// be differentiated, backward; nullopt, having drawn nothing, otherwise.
// `p` is the dropout probability in effect (0 outside training).
std::optional<Tensor> fused_attention_if_taken(const Tensor& q, const Tensor& k, const Tensor& v,
                                               const Tensor& attn_mask, double p, double scale);

}  // namespace hearth::detail
