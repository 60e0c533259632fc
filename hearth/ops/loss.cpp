// Losses: cross_entropy (fused log_softmax + nll), nll_loss and mse_loss.
// Class-index losses move the class dim last so kernels see dense [M, C] rows
// and [M] targets; per-row losses are kept in the accumulation dtype and reduced
// there before the result takes the input's dtype.
#include "hearth/dispatch/schemas/loss.h"

#include "hearth/autograd/function.h"
#include "hearth/ops/autocast_policy.h"
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
using detail::Reduction;

// A class-index loss call, reshaped for its kernels.
struct ClassRows {
  Tensor rows;           // [M, C] dense, detached
  Tensor target;         // [M] int64 dense
  Tensor weight;         // [C] dense or undefined
  Shape input_shape;     // as given
  Shape permuted_shape;  // input with the class dim moved last
  Shape target_shape;    // the shape of a "none" reduction
  int64_t M = 0, C = 0;
};

ClassRows prepare(const char* op, const Tensor& input, const Tensor& target, const Tensor& weight) {
  detail::check_floating(op, input, "input");
  detail::check_defined(op, target, "target");
  HEARTH_CHECK(target.dtype() == DType::int64 || target.dtype() == DType::int32, TypeError, "[", op,
               "] expected class-index targets of dtype int64 (or int32), got ", dtype_name(target.dtype()),
               "; class-probability targets are not supported");
  HEARTH_CHECK(input.dim() >= 1, ShapeError, "[", op, "] expected input of shape [N, C] or [N, C, d1, ...], got ",
               input.shape_string());
  HEARTH_CHECK(target.device() == input.device(), DeviceError, "[", op, "] expected all tensors on ",
               input.device().str(), ", but 'target' is on ", target.device().str());
  ClassRows r;
  r.input_shape = input.shape();
  Tensor in = input.detach();
  // Unbatched: [C] logits with a 0-dim target.
  if (input.dim() == 1) {
    HEARTH_CHECK(target.dim() == 0, ShapeError, "[", op, "] expected a 0-dim target for unbatched input of shape ",
                 input.shape_string(), ", got ", target.shape_string());
    in = in.unsqueeze(0);
  } else {
    Shape expected = input.shape();
    expected.erase(expected.begin() + 1);
    HEARTH_CHECK(target.shape() == expected, ShapeError, "[", op, "] expected target of shape ", shape_str(expected),
                 " for input of shape ", input.shape_string(), " (class dim 1 removed), got ", target.shape_string());
  }
  r.C = in.size(1);
  HEARTH_CHECK(r.C > 0, ShapeError, "[", op, "] expected at least one class, got input of shape ",
               input.shape_string());
  detail::check_channel_param(op, weight, "weight", r.C, input);
  r.target_shape = target.shape();
  r.M = in.numel() / r.C;
  if (in.dim() > 2) {
    std::vector<int64_t> perm{0};
    for (int64_t d = 2; d < in.dim(); ++d) perm.push_back(d);
    perm.push_back(1);
    in = permute(in, perm);
  }
  r.permuted_shape = in.shape();
  r.rows = contiguous(in).reshape({r.M, r.C});
  Tensor t = target.detach();
  r.target = contiguous(t.dtype() == DType::int64 ? t : cast(t, DType::int64)).reshape({r.M});
  r.weight = detail::dense_detached(weight);
  return r;
}

// [M, C] rows back to the caller's layout (class dim 1).
Tensor restore_layout(const Tensor& rows, const ClassRows& r) {
  Tensor t = rows.reshape(r.permuted_shape);
  if (t.dim() > 2) {
    std::vector<int64_t> inv(t.dim());
    inv[0] = 0;
    inv[1] = t.dim() - 1;
    for (int64_t d = 2; d < t.dim(); ++d) inv[d] = d - 1;
    t = permute(t, inv);
  }
  return t.reshape(r.input_shape);
}

// Reduces per-row losses [M] (accumulation dtype) and returns the result in `dtype`,
// plus the mean's denominator (sum of target weights), defined for "mean" only.
std::pair<Tensor, Tensor> reduce_rows(const Tensor& loss, const Tensor& target_weight, Reduction red,
                                      const ClassRows& r, DType dtype) {
  if (red == Reduction::none) return {cast(loss, dtype).reshape(r.target_shape), Tensor()};
  if (red == Reduction::sum) return {cast(sum(loss), dtype), Tensor()};
  Tensor denom = sum(target_weight);
  return {cast(div(sum(loss), denom), dtype), denom};
}

// The upstream gradient as one value per row, in the accumulation dtype.
Tensor per_row_grad(const Tensor& g, Reduction red, const Tensor& denom, int64_t M, DType acc) {
  Tensor ga = g.dtype() == acc ? g : cast(g, acc);
  if (red == Reduction::none) return detail::dense_detached(ga).reshape({M});
  if (red == Reduction::mean) ga = div(ga, denom);
  return contiguous(expand(ga.reshape({1}), {M}));
}

}  // namespace

Tensor cross_entropy(const Tensor& logits, const Tensor& target, const Tensor& weight, int64_t ignore_index,
                     const std::string& reduction, double label_smoothing) {
  if (auto ac = detail::autocast("cross_entropy", logits, target, weight))
    return cross_entropy(ac[0], ac[1], ac[2], ignore_index, reduction, label_smoothing);
  static OpHandle op = detail::op_handle(OpId::cross_entropy);
  static OpHandle bw_op = detail::op_handle(OpId::cross_entropy_backward);
  const Reduction red = detail::parse_reduction("cross_entropy", reduction);
  HEARTH_CHECK(label_smoothing >= 0.0 && label_smoothing <= 1.0, ValueError,
               "[cross_entropy] label_smoothing must be in [0, 1], got ", label_smoothing);
  ClassRows r = prepare("cross_entropy", logits, target, weight);
  const DType acc = detail::acc_dtype(logits.dtype());
  const Device dev = logits.device();
  Tensor loss = Tensor::empty({r.M}, acc, dev), lse = Tensor::empty({r.M}, acc, dev);
  Tensor tw = Tensor::empty({r.M}, acc, dev);
  const CrossEntropyAttrs attrs{ignore_index, label_smoothing};
  if (r.M > 0) detail::run(op, {r.rows, r.target, r.weight}, {loss, lse, tw}, attrs);
  const std::pair<Tensor, Tensor> reduced = reduce_rows(loss, tw, red, r, logits.dtype());
  const Tensor& out = reduced.first;

  if (autograd::any_requires_grad({logits})) {
    const SavedTensor rows(r.rows);
    r.rows = Tensor();  // kept only through `rows`, which catches in-place changes
    autograd::record(
        "CrossEntropyBackward", {logits}, {out},
        [r, rows, lse, denom = reduced.second, red, attrs, acc, dtype = logits.dtype(), dev](const BackwardContext& c) {
          Tensor gx = Tensor::empty({r.M, r.C}, dtype, dev);
          if (r.M > 0) {
            Tensor gl = per_row_grad(c.grad(0), red, denom, r.M, acc);
            detail::run(bw_op, {rows.unpack(c.name()), r.target, lse, gl, r.weight}, {gx}, attrs);
          }
          return std::vector<Tensor>{restore_layout(gx, r)};
        });
  }
  return out;
}

Tensor nll_loss(const Tensor& log_probs, const Tensor& target, const Tensor& weight, int64_t ignore_index,
                const std::string& reduction) {
  if (auto ac = detail::autocast("nll_loss", log_probs, target, weight))
    return nll_loss(ac[0], ac[1], ac[2], ignore_index, reduction);
  static OpHandle op = detail::op_handle(OpId::nll_loss);
  static OpHandle bw_op = detail::op_handle(OpId::nll_loss_backward);
  const Reduction red = detail::parse_reduction("nll_loss", reduction);
  ClassRows r = prepare("nll_loss", log_probs, target, weight);
  const DType acc = detail::acc_dtype(log_probs.dtype());
  const Device dev = log_probs.device();
  Tensor loss = Tensor::empty({r.M}, acc, dev), tw = Tensor::empty({r.M}, acc, dev);
  const NllLossAttrs attrs{ignore_index};
  if (r.M > 0) detail::run(op, {r.rows, r.target, r.weight}, {loss, tw}, attrs);
  const std::pair<Tensor, Tensor> reduced = reduce_rows(loss, tw, red, r, log_probs.dtype());
  const Tensor& out = reduced.first;

  if (autograd::any_requires_grad({log_probs})) {
    r.rows = Tensor();  // the gradient does not depend on the input's values
    autograd::record(
        "NllLossBackward", {log_probs}, {out},
        [r, denom = reduced.second, red, attrs, acc, dtype = log_probs.dtype(), dev](const BackwardContext& c) {
          Tensor gx = Tensor::empty({r.M, r.C}, dtype, dev);
          if (r.M > 0) {
            Tensor gl = per_row_grad(c.grad(0), red, denom, r.M, acc);
            detail::run(bw_op, {gl, r.target, r.weight}, {gx}, attrs);
          }
          return std::vector<Tensor>{restore_layout(gx, r)};
        });
  }
  return out;
}

Tensor mse_loss(const Tensor& input, const Tensor& target, const std::string& reduction) {
  if (auto ac = detail::autocast("mse_loss", input, target)) return mse_loss(ac[0], ac[1], reduction);
  const Reduction red = detail::parse_reduction("mse_loss", reduction);
  detail::check_floating("mse_loss", input, "input");
  detail::check_defined("mse_loss", target, "target");
  // Broadcasting here is almost always a shape bug ([N, 1] against [N]), so
  // mismatched shapes are refused rather than silently broadcast.
  HEARTH_CHECK(input.shape() == target.shape(), ShapeError,
               "[mse_loss] expected input and target of the same shape, got ", input.shape_string(), " and ",
               target.shape_string(), "; reshape one of them explicitly");
  Tensor d = sub(input, target);
  Tensor sq = mul(d, d);
  if (red == Reduction::none) return sq;
  return red == Reduction::sum ? sum(sq) : mean(sq);
}

}  // namespace hearth
