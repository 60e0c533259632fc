// attention_softmax: the middle of attention, softmax(scores * scale + mask)
// and dropout, as one kernel each way where the backend has one. Separately,
// these are six passes over the [B, H, L, S] scores (mul, add, softmax,
// dropout, and dropout_backward, softmax_backward, mul back), the largest
// activations of a transformer layer; fused, each direction reads and writes
// them once. What the kernel cannot express runs the composite instead.
#include "hearth/dispatch/schemas/attention_softmax.h"

#include <array>

#include "hearth/autograd/function.h"
#include "hearth/core/generator.h"
#include "hearth/dispatch/registry.h"
#include "hearth/dispatch/schemas/dropout.h"
#include "hearth/ops/attention.h"
#include "hearth/ops/autocast.h"
#include "hearth/ops/composition.h"
#include "hearth/ops/elementwise.h"
#include "hearth/ops/nn_functional.h"
#include "hearth/ops/nn_util.h"
#include "hearth/ops/op_utils.h"
#include "hearth/ops/reduction.h"
#include "hearth/ops/view.h"

namespace hearth {
namespace {

using autograd::BackwardContext;
using autograd::SavedTensor;

OpHandle forward_op() {
  static OpHandle op = detail::op_handle(OpId::attention_softmax);
  return op;
}
OpHandle backward_op() {
  static OpHandle op = detail::op_handle(OpId::attention_softmax_backward);
  return op;
}

// The additive mask in `dtype`. A float32 mask of "lowest" values (as BERT's)
// would become -inf in a half type, and a row masked everywhere NaN instead of
// uniform: values are clamped to the narrower type's finite range first.
Tensor mask_as(const Tensor& mask, DType dtype) {
  if (!mask.defined() || mask.dtype() == dtype) return mask;
  if (!is_floating(mask.dtype()) || promote_types(mask.dtype(), dtype) == dtype) return cast(mask, dtype);
  return cast(clamp_min(mask, lowest_finite(dtype)), dtype);
}

// The mask as the kernel reads it: in the scores' dtype, or for half scores
// in float32, where the kernel computes: float32's "lowest" then stays itself
// and, added to any score, is still the same number, so a row masked
// everywhere is uniform as in float32, and BERT's float32 mask needs no cast.
Tensor kernel_mask(const Tensor& mask, DType dtype) {
  if (!mask.defined() || mask.dtype() == dtype) return mask;
  return mask_as(mask, is_half_type(dtype) ? DType::float32 : dtype);
}

Tensor composite(const Tensor& scores, const Tensor& mask, double scale, double dropout_p, bool training) {
  // The fused kernel computes in the scores' dtype (float32 inside for half
  // types); so does the composite: softmax must not go up to float32 here.
  AutocastSuspend suspend;
  Tensor x = mul(scores, scale);
  if (mask.defined()) x = add(x, mask);
  return dropout(softmax(x, -1), dropout_p, training);
}

// Fills the attrs' row sizes and strides for a dense `mask` broadcast against
// `scores` [..., L, S]: dims of size 1 (and missing leading dims) get stride
// 0, and adjacent row dims merge where the mask's strides allow. False when
// the mask would enlarge the scores or more than three row dims remain.
bool describe_mask(const Shape& scores, const Tensor& mask, AttentionSoftmaxAttrs& a) {
  const size_t n = scores.size();
  if (mask.dim() > static_cast<int64_t>(n)) return false;
  const Shape& ms = mask.shape();
  const Strides mstr = contiguous_strides(ms);
  Shape sizes(n);
  Strides strides(n);
  for (size_t d = 0; d < n; ++d) {
    const int64_t md = static_cast<int64_t>(d) - static_cast<int64_t>(n - ms.size());
    const int64_t size = md < 0 ? 1 : ms[md];
    if (size != 1 && size != scores[d]) return false;
    sizes[d] = scores[d];
    strides[d] = size == 1 ? 0 : mstr[md];
  }
  a.mask_col_stride = strides[n - 1];
  // Row dims, outermost first, merged: (size_a, stride_a)(size_b, stride_b) is
  // one dim when stride_a == stride_b * size_b.
  std::vector<std::pair<int64_t, int64_t>> rows;
  for (size_t d = 0; d + 1 < n; ++d) {
    if (sizes[d] == 1) continue;
    if (!rows.empty() && rows.back().second == strides[d] * sizes[d]) {
      rows.back() = {rows.back().first * sizes[d], strides[d]};
    } else {
      rows.emplace_back(sizes[d], strides[d]);
    }
  }
  if (rows.size() > 3) return false;
  const size_t pad = 3 - rows.size();
  for (size_t k = 0; k < rows.size(); ++k) {
    a.row_sizes[pad + k] = rows[k].first;
    a.row_strides[pad + k] = rows[k].second;
  }
  return true;
}

Tensor fused(const Tensor& scores, const Tensor& mask, AttentionSoftmaxAttrs a) {
  const int64_t S = scores.size(-1), R = scores.numel() / S;
  const bool drop = a.p > 0.0;
  Tensor x = detail::dense_detached(scores).reshape({R, S});
  Tensor probs = Tensor::empty({R, S}, scores.dtype(), scores.device());
  Tensor y = drop ? Tensor::empty({R, S}, scores.dtype(), scores.device()) : Tensor();
  Tensor keep = drop ? Tensor::empty({R * S}, DType::bool_, scores.device()) : Tensor();
  if (drop) {
    // The counters dropout(softmax(...)) would reserve, so both draw the same mask.
    Generator& g = default_generator();
    a.seed = g.seed();
    a.offset = g.reserve(dropout_counters(R * S));
  }
  detail::run(forward_op(), {x, mask}, {probs, y, keep}, a);
  Tensor out = probs.view(scores.shape());
  if (autograd::any_requires_grad({scores})) {
    // Without dropout y is probs itself, saved as softmax saves its output.
    autograd::record("AttentionSoftmaxBackward", {scores}, {out},
                     [sy = SavedTensor(drop ? y : probs), keep, a, shape = scores.shape()](const BackwardContext& c) {
                       Tensor yv = sy.unpack(c.name());
                       Tensor g = c.grad(0).dtype() == yv.dtype() ? c.grad(0) : cast(c.grad(0), yv.dtype());
                       Tensor gx = Tensor::empty(yv.shape(), yv.dtype(), yv.device());
                       detail::run(backward_op(), {detail::dense_detached(g).reshape(yv.shape()), yv, keep}, {gx}, a);
                       return std::vector<Tensor>{gx.view(shape)};
                     });
  }
  return out;
}

}  // namespace

Tensor attention_softmax(const Tensor& scores, const Tensor& attn_mask, double scale, double dropout_p, bool training) {
  detail::check_floating("attention_softmax", scores, "scores");
  HEARTH_CHECK(scores.dim() >= 1, ShapeError, "[attention_softmax] expected scores [..., L, S], got a scalar");
  HEARTH_CHECK(!attn_mask.defined() || attn_mask.is_floating_point(), TypeError,
               "[attention_softmax] attn_mask must be an additive floating mask, got ", dtype_name(attn_mask.dtype()));
  HEARTH_CHECK(dropout_p >= 0.0 && dropout_p <= 1.0, ValueError,
               "[attention_softmax] dropout_p must be in [0, 1], got ", dropout_p);
  const double p = training ? dropout_p : 0.0;
  AttentionSoftmaxAttrs a;
  a.scale = scale;
  a.p = p;
  const bool fusable =
      scores.numel() > 0 && p < 1.0 && supports(forward_op(), scores.device().kind, scores.dtype()) &&
      (!attn_mask.defined() || (!autograd::any_requires_grad({attn_mask}) && attn_mask.device() == scores.device() &&
                                describe_mask(scores.shape(), attn_mask, a)));
  if (!fusable) return composite(scores, mask_as(attn_mask, scores.dtype()), scale, dropout_p, training);
  return fused(scores, detail::dense_detached(kernel_mask(attn_mask, scores.dtype())), a);
}

// The compositions of attention_softmax and its backward (the contracts of
// hearth/dispatch/schemas/attention_softmax.h), in the accumulation dtype A as
// the kernels compute. Dropout is the dropout op itself, with the call's seed
// and offset over the same elements, so both keep the same ones.
namespace {

OpHandle dropout_op() {
  static OpHandle op = detail::op_handle(OpId::dropout);
  return op;
}
OpHandle dropout_backward_op() {
  static OpHandle op = detail::op_handle(OpId::dropout_backward);
  return op;
}

// The additive mask as [R, S] in A: the attrs' row sizes and strides over the
// mask's dense buffer.
Tensor mask_rows(const Tensor& mask, const AttentionSoftmaxAttrs& a, int64_t R, int64_t S, DType acc) {
  const Tensor rows =
      mask.as_strided_view({a.row_sizes[0], a.row_sizes[1], a.row_sizes[2], S},
                           {a.row_strides[0], a.row_strides[1], a.row_strides[2], a.mask_col_stride}, mask.offset());
  return detail::as_dtype(reshape(rows, {R, S}), acc);
}

void compose_attention_softmax(OpCall& call) {
  detail::CompositionScope scope;
  const auto& a = call.attrs<AttentionSoftmaxAttrs>();
  const Tensor& scores = call.in(0);
  const Tensor mask = call.inputs.size() > 1 ? call.in(1) : Tensor();
  const int64_t R = scores.size(0), S = scores.size(1);
  const DType acc = detail::acc_dtype(scores.dtype());
  Tensor x = mul(detail::as_dtype(scores, acc), a.scale);
  if (mask.defined()) x = add(x, mask_rows(mask, a, R, S, acc));
  const Tensor y = detail::as_dtype(softmax(x, -1), scores.dtype());
  if (a.p == 0.0) {
    copy_(call.out(0), y);
    return;
  }
  copy_(call.out(1), y);
  const DropoutAttrs d{a.seed, a.offset, a.p};
  detail::run(dropout_op(), {call.out(1).reshape({R * S})}, {call.out(0).reshape({R * S}), call.out(2)}, d);
}

void compose_attention_softmax_backward(OpCall& call) {
  detail::CompositionScope scope;
  const auto& a = call.attrs<AttentionSoftmaxAttrs>();
  const Tensor &grad_probs = call.in(0), &y = call.in(1);
  const Tensor keep = call.inputs.size() > 2 ? call.in(2) : Tensor();
  const DType acc = detail::acc_dtype(y.dtype());
  Tensor g = detail::as_dtype(grad_probs, acc);
  if (keep.defined()) {
    Tensor dropped = Tensor::empty(g.shape(), acc, g.device());
    const DropoutAttrs d{a.seed, a.offset, a.p};
    detail::run(dropout_backward_op(), {g.reshape({g.numel()}), keep}, {dropped.reshape({g.numel()})}, d);
    g = dropped;
  }
  const Tensor ya = detail::as_dtype(y, acc);
  const Tensor dot = sum(mul(g, ya), {-1}, true);
  copy_(call.out(0), mul(mul(ya, sub(g, dot)), a.scale));
}

HEARTH_REGISTER_COMPOSITION(attention_softmax, compose_attention_softmax);
HEARTH_REGISTER_COMPOSITION(attention_softmax_backward, compose_attention_softmax_backward);

}  // namespace

}  // namespace hearth
