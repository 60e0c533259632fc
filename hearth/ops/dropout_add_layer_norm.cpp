// dropout_add_layer_norm: layer_norm(dropout(x) + residual), the tail of a
// transformer block (BERT's BertSelfOutput and BertOutput), as one kernel each
// way where the backend has one. Separately these are three kernels forward
// (dropout writing its output and mask, add, layer_norm) and as many backward;
// fused, the forward reads x and the residual once and writes the output and
// the sum the backward reads, and the backward reads the output gradient and
// the sum once and writes both input gradients. The dropout mask is not kept:
// the backward draws it again from the forward's Philox seed and offset.
//
// The composite runs instead where the kernel cannot take the call (see
// fusable() below) and everywhere after set_fused_layer_norm_enabled(false).
#include "hearth/dispatch/schemas/dropout_add_layer_norm.h"

#include <atomic>

#include "hearth/autograd/function.h"
#include "hearth/core/generator.h"
#include "hearth/dispatch/registry.h"
#include "hearth/dispatch/schemas/dropout.h"
#include "hearth/dispatch/schemas/layer_norm.h"
#include "hearth/ops/autocast.h"
#include "hearth/ops/composition.h"
#include "hearth/ops/elementwise.h"
#include "hearth/ops/factory.h"
#include "hearth/ops/nn_functional.h"
#include "hearth/ops/nn_util.h"
#include "hearth/ops/op_utils.h"
#include "hearth/ops/view.h"

namespace hearth {
namespace {

using autograd::BackwardContext;
using autograd::SavedTensor;

OpHandle forward_op() {
  static OpHandle op = detail::op_handle(OpId::dropout_add_layer_norm);
  return op;
}
OpHandle backward_op() {
  static OpHandle op = detail::op_handle(OpId::dropout_add_layer_norm_backward);
  return op;
}

std::atomic<bool>& enabled_flag() {
  // On: the other path stays as the reference tests compare this one with.
  static std::atomic<bool> on{true};
  return on;
}

Tensor composite(const Tensor& x, const Tensor& residual, const Shape& normalized_shape, const Tensor& weight,
                 const Tensor& bias, double p, bool training, double eps) {
  return layer_norm(add(dropout(x, p, training), residual), normalized_shape, weight, bias, eps);
}

bool param_fits(const Tensor& t, const Shape& normalized_shape, DType dtype, const Device& device) {
  if (!t.defined()) return true;
  return t.shape() == normalized_shape && (t.dtype() == dtype || t.dtype() == detail::acc_dtype(dtype)) &&
         t.device() == device;
}

// Whether the kernel computes exactly the composite for this call: x and the
// residual of one shape ending in normalized_shape, on one device; the residual
// of x's dtype, or float32 beside a half x (the sum's dtype is then the
// residual's, as add promotes); parameters of the sum's dtype or its
// accumulation dtype; and no autocast of the layer norm to float32 (a half sum
// under autocast) in between. Anything else, invalid calls included, takes the
// composite, whose ops say what is wrong.
bool fusable(const Tensor& x, const Tensor& residual, const Shape& normalized_shape, const Tensor& weight,
             const Tensor& bias, double p, double eps) {
  if (!enabled_flag().load(std::memory_order_relaxed)) return false;
  if (!residual.defined() || !residual.is_floating_point() || x.shape() != residual.shape()) return false;
  if (x.device() != residual.device() || !(eps > 0) || p >= 1.0) return false;
  const int64_t nd = static_cast<int64_t>(normalized_shape.size());
  if (nd == 0 || x.dim() < nd) return false;
  for (int64_t i = 0; i < nd; ++i)
    if (x.size(x.dim() - nd + i) != normalized_shape[i]) return false;
  const DType xd = x.dtype(), td = residual.dtype();
  if (xd != td && !(is_half_type(xd) && td == DType::float32)) return false;
  if (is_half_type(td) && autocast_enabled(x.device().kind)) return false;
  if (!param_fits(weight, normalized_shape, td, x.device()) || !param_fits(bias, normalized_shape, td, x.device()))
    return false;
  return supports(forward_op(), x.device().kind, xd);
}

Tensor fused(const Tensor& x, const Tensor& residual, const Shape& normalized_shape, const Tensor& weight,
             const Tensor& bias, double p, double eps) {
  const int64_t K = numel_of(normalized_shape);
  const int64_t M = K == 0 ? 0 : x.numel() / K;
  const DType td = residual.dtype(), acc = detail::acc_dtype(td);
  const Device dev = x.device();
  const bool grad = autograd::any_requires_grad({x, residual, weight, bias});
  Tensor x2 = detail::dense_detached(x).reshape({M, K});
  Tensor r2 = detail::dense_detached(residual).reshape({M, K});
  Tensor w1 = weight.defined() ? detail::dense_detached(weight).reshape({K}) : Tensor();
  Tensor b1 = bias.defined() ? detail::dense_detached(bias).reshape({K}) : Tensor();
  Tensor y = Tensor::empty({M, K}, td, dev);
  Tensor mean = Tensor::empty({M}, acc, dev), rstd = Tensor::empty({M}, acc, dev);
  // The sum is what the backward reads; without a backward it is not written.
  Tensor sum = grad ? Tensor::empty({M, K}, td, dev) : Tensor();
  DropoutAddLayerNormAttrs a{eps, p, 0, 0};
  const int64_t n = x.numel();
  if (n > 0) {
    if (p > 0.0) {
      // The counters dropout(x) would reserve, so both drop the same elements.
      Generator& g = default_generator();
      a.seed = g.seed();
      a.offset = g.reserve(dropout_counters(n));
    }
    detail::run(forward_op(), {x2, r2, w1, b1}, {y, mean, rstd, sum}, a);
  }
  Tensor out = y.view(x.shape());
  if (grad) {
    autograd::record(
        "DropoutAddLayerNormBackward", {x, residual, weight, bias}, {out},
        [sum, mean, rstd, sw = SavedTensor(w1), a, xdt = x.dtype(), shape = x.shape(), normalized_shape,
         wdt = weight.defined() ? weight.dtype() : acc,
         bdt = bias.defined() ? bias.dtype() : acc](const BackwardContext& c) {
          const Shape& s2 = sum.shape();
          const Device d = sum.device();
          Tensor gx = c.needs(0) ? Tensor::empty(s2, xdt, d) : Tensor();
          Tensor gr = c.needs(1) ? Tensor::empty(s2, sum.dtype(), d) : Tensor();
          Tensor gw = c.needs(2) ? Tensor::empty({s2[1]}, wdt, d) : Tensor();
          Tensor gb = c.needs(3) ? Tensor::empty({s2[1]}, bdt, d) : Tensor();
          if (sum.numel() > 0) {
            Tensor g = c.grad(0).dtype() == sum.dtype() ? c.grad(0) : cast(c.grad(0), sum.dtype());
            g = detail::dense_detached(g).reshape(s2);
            detail::run(backward_op(), {g, sum, mean, rstd, sw.unpack(c.name())}, {gx, gr, gw, gb}, a);
          } else {  // nothing to normalise: parameter gradients are empty sums
            if (gw.defined()) zero_(gw);
            if (gb.defined()) zero_(gb);
          }
          return std::vector<Tensor>{gx.defined() ? gx.view(shape) : gx, gr.defined() ? gr.view(shape) : gr,
                                     gw.defined() ? gw.view(normalized_shape) : gw,
                                     gb.defined() ? gb.view(normalized_shape) : gb};
        });
  }
  return out;
}

}  // namespace

bool fused_layer_norm_enabled() { return enabled_flag().load(); }
void set_fused_layer_norm_enabled(bool on) { enabled_flag().store(on); }

Tensor dropout_add_layer_norm(const Tensor& x, const Tensor& residual, const Shape& normalized_shape,
                              const Tensor& weight, const Tensor& bias, double p, bool training, double eps) {
  detail::check_floating("dropout_add_layer_norm", x, "input");
  HEARTH_CHECK(p >= 0.0 && p <= 1.0, ValueError, "[dropout_add_layer_norm] probability p must be in [0, 1], got ", p);
  const double drop = training ? p : 0.0;
  if (!fusable(x, residual, normalized_shape, weight, bias, drop, eps))
    return composite(x, residual, normalized_shape, weight, bias, p, training, eps);
  return fused(x, residual, normalized_shape, weight, bias, drop, eps);
}

// The compositions of dropout_add_layer_norm and its backward (the contracts
// of hearth/dispatch/schemas/dropout_add_layer_norm.h): the dropout op with
// the call's seed and offset over x's elements, the add in the sum's dtype,
// and layer_norm's own kernels, which write the statistics the fused op's
// backward reads. The backward draws the mask again with the same counters.
namespace {

OpHandle dropout_op() {
  static OpHandle op = detail::op_handle(OpId::dropout);
  return op;
}

// The mask dropout keeps for n elements of `dtype` with the attrs' counters.
Tensor redrawn_keep(int64_t n, DType dtype, Device device, const DropoutAddLayerNormAttrs& a) {
  Tensor ones = full({n}, 1, dtype, device), dropped = Tensor::empty({n}, dtype, device);
  Tensor keep = Tensor::empty({n}, DType::bool_, device);
  detail::run(dropout_op(), {ones}, {dropped, keep}, DropoutAttrs{a.seed, a.offset, a.p});
  return keep;
}

void compose_dropout_add_layer_norm(OpCall& call) {
  static OpHandle layer_norm_op = detail::op_handle(OpId::layer_norm);
  detail::CompositionScope scope;
  const auto& a = call.attrs<DropoutAddLayerNormAttrs>();
  const Tensor &x = call.in(0), &residual = call.in(1);
  Tensor d = x;
  if (a.p > 0.0) {
    const int64_t n = x.numel();
    d = Tensor::empty(x.shape(), x.dtype(), x.device());
    detail::run(dropout_op(), {x.reshape({n})}, {d.reshape({n}), Tensor::empty({n}, DType::bool_, x.device())},
                DropoutAttrs{a.seed, a.offset, a.p});
  }
  const Tensor sum = contiguous(detail::as_dtype(add(d, residual), call.out(0).dtype()));
  detail::run(layer_norm_op, {sum, call.in(2), call.in(3)}, {call.out(0), call.out(1), call.out(2)},
              LayerNormAttrs{a.eps});
  detail::write_output(call.outputs.size() > 3 ? call.out(3) : Tensor(), sum);
}

void compose_dropout_add_layer_norm_backward(OpCall& call) {
  static OpHandle layer_norm_backward_op = detail::op_handle(OpId::layer_norm_backward);
  static OpHandle dropout_backward_op = detail::op_handle(OpId::dropout_backward);
  detail::CompositionScope scope;
  const auto& a = call.attrs<DropoutAddLayerNormAttrs>();
  const Tensor& sum = call.in(1);
  const Tensor &gx = call.out(0), &gr = call.out(1);
  Tensor g = Tensor::empty(sum.shape(), sum.dtype(), sum.device());
  detail::run(layer_norm_backward_op, {call.in(0), sum, call.in(2), call.in(3), call.in(4)},
              {g, call.out(2), call.out(3)});
  detail::write_output(gr, g);
  if (!gx.defined()) return;
  const Tensor gxd = contiguous(detail::as_dtype(g, gx.dtype()));
  if (a.p == 0.0) {
    copy_(gx, gxd);
    return;
  }
  const int64_t n = gx.numel();
  detail::run(dropout_backward_op, {gxd.reshape({n}), redrawn_keep(n, gx.dtype(), gx.device(), a)}, {gx.reshape({n})},
              DropoutAttrs{a.seed, a.offset, a.p});
}

HEARTH_REGISTER_COMPOSITION(dropout_add_layer_norm, compose_dropout_add_layer_norm);
HEARTH_REGISTER_COMPOSITION(dropout_add_layer_norm_backward, compose_dropout_add_layer_norm_backward);

}  // namespace

}  // namespace hearth
