// Attention (torch.nn.functional.scaled_dot_product_attention).
//
// Every attention layer in hearth goes through this one function, so that a
// backend with a fused kernel (flash attention) can take it over in one place:
// where the device's fused_attention kernel takes the call (its check,
// registry.h), it runs that op. Otherwise it is composed of two products around
// attention_softmax:
//
//   scores = q @ k^T                                              [..., L, S]
//   probs  = dropout(softmax(scores * scale + attn_mask, -1), dropout_p, training)
//   out    = probs @ v                                            [..., L, Dv]
//
// attention_softmax (the middle line) is one kernel each way where the backend
// has an attention_softmax kernel (the CPU and CUDA do), and the composite of
// mul, add, softmax and dropout elsewhere and for what the kernel cannot
// express; both drop the same elements for the same generator state.
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

// scaled_dot_product_attention as one fused op (hearth/dispatch/schemas/fused_attention.h)
// that saves for the backward only its output and each row's log-sum-exp, not
// the [B, H, L, S] weights. q [B, H, L, D], k [B, H, S, D], v [B, H, S, Dv] of
// one floating dtype; attn_mask additive, broadcastable as [B, 1, L, S] (the
// same keys masked for every head: BERT's [B, 1, 1, S]), not requiring grad,
// read in q's dtype and clamped to +-65504 (so a row masked everywhere is the
// softmax of its scores, not uniform as in the composite). Other cases are a
// ValueError; scaled_dot_product_attention takes them all.
// scaled_dot_product_attention calls this where the device's kernel takes the
// call (each backend's check says which shapes and dtypes it takes). Called
// directly, it runs on every backend (as its composition where it has no kernel):
// the CPU's kernel is the reference, loops in the definition's order.
// Dropout draws from the default generator; which elements it drops is the
// backend's own choice (the CPU drops what dropout() would; an accelerator's
// kernel may draw its own mask), the same in the forward and the backward, and in the replays of a
// recorded step graph.
Tensor fused_attention(const Tensor& q, const Tensor& k, const Tensor& v, const Tensor& attn_mask = Tensor(),
                       double dropout_p = 0.0, bool training = false, std::optional<double> scale = std::nullopt);

// Whether scaled_dot_product_attention would run this call through
// fused_attention (it asks the kernel's check; nothing runs and nothing is drawn).
bool attention_runs_fused(const Tensor& q, const Tensor& k, const Tensor& v, const Tensor& attn_mask = Tensor(),
                          double dropout_p = 0.0, bool training = false);

// Whether scaled_dot_product_attention may take fused_attention at all:
// HEARTH_FUSED_ATTENTION (read once; unset is on, 0 turns it off), or the last
// set_fused_attention_enabled() (tests compare both paths in one process).
bool fused_attention_enabled();
void set_fused_attention_enabled(bool on);

// probs = dropout(softmax(scores * scale + attn_mask, -1), dropout_p, training),
// the middle of attention. scores [..., L, S] floating; attn_mask undefined or
// additive, broadcastable to the scores. Computes in the scores' dtype (float32
// inside for half types) whatever autocast says.
//
// Backends with the attention_softmax kernel (hearth/dispatch/schemas/attention_softmax.h)
// run it as one kernel forward and one backward; they read the mask in the
// scores' dtype, or in float32 beside half scores (their arithmetic's dtype).
// The composite of the ops above runs instead where there is no kernel, with
// dropout_p == 1, and for a mask that requires grad, would enlarge the scores,
// or broadcasts in a way three row strides cannot describe; it casts the mask
// to the scores' dtype. Either way a mask of a wider dtype is clamped to the
// finite range of the dtype it is read in (float32's "lowest" stays finite in
// a half type, so a row masked everywhere is uniform, not NaN), and dropout
// draws from the default generator as dropout() would: the same elements are
// dropped either way.
Tensor attention_softmax(const Tensor& scores, const Tensor& attn_mask, double scale, double dropout_p = 0.0,
                         bool training = false);

}  // namespace hearth
