// Attention (torch.nn.functional.scaled_dot_product_attention).
//
// Every attention layer in hearth goes through this one function, so that a
// backend with a fused kernel (flash attention) can take it over in one place.
// Until one does, it is the composite of basic ops below, which every backend
// already runs and differentiates:
//
//   scores = (q @ k^T) * scale + attn_mask      [..., L, S]
//   probs  = dropout(softmax(scores, -1), dropout_p, training)
//   out    = probs @ v                           [..., L, Dv]
#pragma once

#include <optional>

#include "hearth/core/tensor.h"

namespace hearth {

// q [..., L, D], k [..., S, D], v [..., S, Dv], floating, one dtype and device;
// the leading (batch, head) dims broadcast as in matmul.
// attn_mask: undefined, or an additive floating mask broadcastable to
// [..., L, S] (0 where attending, a large negative number where not); a mask of
// another floating dtype is cast to q's.
// dropout_p: probability of dropping an attention weight, applied only when
// `training`. scale: defaults to 1 / sqrt(D).
Tensor scaled_dot_product_attention(const Tensor& q, const Tensor& k, const Tensor& v,
                                    const Tensor& attn_mask = Tensor(), double dropout_p = 0.0, bool training = false,
                                    std::optional<double> scale = std::nullopt);

}  // namespace hearth
