// Fused attention as backends see it: softmax(q k^T * scale + mask), dropout
// and the product with v in one op that keeps, for the backward, only its
// output and each row's log-sum-exp, never the [B, H, L, S] weights (flash
// attention's contract: the backward recomputes the weights from the two).
// The functional layer (hearth/ops/fused_attention.cpp) chooses the layouts;
// kernels take every tensor with the strides it has.
//
// Dtypes: T is q's floating dtype (k, v, out, the mask and the gradients
// share it); A, the arithmetic's, is float32 for bfloat16 and float16, T
// otherwise.
//
//   fused_attention           inputs {q [B,H,L,D], k [B,H,S,D], v [B,H,S,Dv], mask?}
//                             outputs {out [B,H,L,Dv], lse [B,H,L] A?, rng [2] int64?}
//                                                                                 FusedAttentionAttrs
//   fused_attention_backward  inputs {grad_out [B,H,L,Dv], q, k, v, out, lse, mask?, rng?}
//                             outputs {grad_q, grad_k, grad_v} (q's, k's and v's shapes)
//                                                                                 FusedAttentionAttrs
//
// Layouts. Every tensor but lse and rng has unit stride in its last dim and
// non-negative strides elsewhere. grad_out has out's strides and each gradient
// its input's: the functional layer arranges both, so that a backend can plan
// the backward from the forward's call alone. The mask is [B, 1, L, S], its
// last dim dense and its rows a multiple of eight elements apart (16-byte
// aligned rows in the half types, for vector loads), broadcast over B or L (or
// both) by stride 0, never by a dim of size 1, where the caller's mask is
// ([B, 1, 1, S]: BERT's padding mask). lse is dense.
//
// The forward, in A, for each (b, h) and query l, key s:
//   x[l, s]  = scale * (q[l] . k[s]) + mask[l, s]
//   lse[l]   = log(sum_s exp(x[l, s]))                    (the row's max subtracted first)
//   w[l, s]  = exp(x[l, s] - lse[l]);  with dropout (p > 0): keep(b, h, l, s) ? w / (1 - p) : 0
//   out[l]   = sum_s w[l, s] v[s]                         (w rounded to T first, as a product of T operands)
// keep is each backend's own function of (seed, offset, b, h, l, s): the CPU
// keeps element i = ((b * H + h) * L + l) * S + s exactly as dropout keeps
// element i (hearth/dispatch/schemas/dropout.h); another backend may use its
// own counter-based mapping. A backend's backward drops exactly what its
// forward dropped. rng, defined when p > 0: the forward writes the {seed,
// offset} it drew with (including any shift a replayed step graph applies to
// the offset), and the backward draws from the same.
// lse is defined when the output will be differentiated, and whenever p > 0
// (a checkpointed block's first forward, not recorded, then runs the same
// graph as its recomputation). A backend with a check
// (hearth/dispatch/registry.h) plans the backward of every call with lse,
// with grad_out laid out as out and each gradient as its input.
//
// The backward, in A, with w and keep recomputed from lse and rng:
//   grad_v[s] = sum_l wd[l, s] grad_out[l]       (wd: w dropped and scaled, rounded to T)
//   dw[l, s]  = grad_out[l] . v[s];  with dropout: keep ? dw / (1 - p) : 0
//   dsum[l]   = grad_out[l] . out[l]             (= sum_s dw[l, s] w[l, s])
//   ds[l, s]  = scale * w[l, s] * (dw[l, s] - dsum[l])     (rounded to T)
//   grad_q[l] = sum_s ds[l, s] k[s];  grad_k[s] = sum_l ds[l, s] q[l]
#pragma once

#include <cstdint>

namespace hearth {

struct FusedAttentionAttrs {
  double scale = 1.0;
  double p = 0.0;  // dropout probability, in [0, 1); 0: no dropout
  // The generator's counters reserved for the mask (the forward's; the
  // backward reads what the forward drew with from rng).
  uint64_t seed = 0;
  uint64_t offset = 0;
};

// The largest magnitude the mask is read with. A row masked everywhere with
// float32's lowest value would have every score absorbed by the mask: its
// log-sum-exp would lose the log of its length, and the weights the backward
// recomputes from it would be that many times too large. Clamped here (the
// largest finite float16, so that both half types hold it), a masked key
// still gets exactly zero weight (its exponential underflows) and a row
// masked everywhere is the softmax of its own scores, forward and backward.
inline constexpr double kFusedAttentionMaskLimit = 65504.0;

}  // namespace hearth
