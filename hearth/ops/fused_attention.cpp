// fused_attention: the whole of attention as one op, saving for the backward
// only its output and each row's log-sum-exp (flash attention's contract,
// hearth/dispatch/schemas/fused_attention.h). The composite
// (scaled_dot_product_attention's matmul, attention_softmax, matmul) keeps
// its [B, H, L, S] weights alive until the backward, the largest activation
// of a transformer layer; here the backward recomputes them from q, k and the
// log-sum-exp.
//
// scaled_dot_product_attention takes this op where the device's kernel says,
// through its check, that it takes the call (forward and backward);
// HEARTH_FUSED_ATTENTION=0 turns that off.
#include "hearth/dispatch/schemas/fused_attention.h"

#include <algorithm>
#include <atomic>
#include <cmath>
#include <numeric>

#include "hearth/autograd/function.h"
#include "hearth/autograd/grad_mode.h"
#include "hearth/core/generator.h"
#include "hearth/core/switch_list.h"
#include "hearth/dispatch/registry.h"
#include "hearth/dispatch/schemas/dropout.h"
#include "hearth/ops/attention.h"
#include "hearth/ops/autocast_policy.h"
#include "hearth/ops/composition.h"
#include "hearth/ops/elementwise.h"
#include "hearth/ops/factory.h"
#include "hearth/ops/fused_attention_path.h"
#include "hearth/ops/linalg.h"
#include "hearth/ops/nn_util.h"
#include "hearth/ops/op_utils.h"
#include "hearth/ops/reduction.h"
#include "hearth/ops/view.h"

namespace hearth {
namespace {

using autograd::BackwardContext;
using autograd::SavedTensor;

OpHandle forward_op() {
  static OpHandle op = detail::op_handle(OpId::fused_attention);
  return op;
}
OpHandle backward_op() {
  static OpHandle op = detail::op_handle(OpId::fused_attention_backward);
  return op;
}

std::atomic<bool>& enabled_flag() {
  static std::atomic<bool> on{switches::fused_attention().get()};
  return on;
}

// The dims of t ordered from the largest stride to the smallest (ties keep
// their order): the order its memory holds them in.
std::vector<int64_t> memory_order(const Tensor& t) {
  std::vector<int64_t> order(static_cast<size_t>(t.dim()));
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(), [&](int64_t a, int64_t b) { return t.stride(a) > t.stride(b); });
  return order;
}

// Whether t fills its memory without gaps in some order of its dims, the last
// dim innermost: then a tensor of another shape can be laid out in the same
// order, and a backend can describe it by its strides alone.
bool dense_in_some_order(const Tensor& t) {
  if (t.stride(-1) != 1 && t.size(-1) != 1) return false;
  const std::vector<int64_t> order = memory_order(t);
  int64_t expected = 1;
  for (auto it = order.rbegin(); it != order.rend(); ++it) {
    if (t.size(*it) != 1 && t.stride(*it) != expected) return false;
    expected *= t.size(*it);
  }
  return order.back() == t.dim() - 1 || t.size(-1) == 1;
}

// An empty tensor of `shape` laid out in `like`'s memory order (q's for the
// output, each input's for its gradient; the schema asks for both).
Tensor empty_in_order_of(const Tensor& like, const Shape& shape, DType dtype) {
  const std::vector<int64_t> order = memory_order(like);
  Shape permuted(shape.size());
  for (size_t i = 0; i < order.size(); ++i) permuted[i] = shape[static_cast<size_t>(order[i])];
  std::vector<int64_t> inverse(order.size());
  for (size_t i = 0; i < order.size(); ++i) inverse[static_cast<size_t>(order[i])] = static_cast<int64_t>(i);
  return Tensor::empty(permuted, dtype, like.device()).permute(inverse);
}

// q, k or v as the kernels read it: itself (detached) when it is dense in some
// order with its last dim innermost, which the [B, S, H, D] memory of split
// heads is, else a contiguous copy.
Tensor operand(const Tensor& t) { return dense_in_some_order(t) ? t.detach() : detail::dense_detached(t); }

// The mask as [B or 1, 1, L or 1, S], or undefined when it cannot be read so
// (it varies over the heads, or broadcasts over the keys).
Tensor mask_4d(const Tensor& mask, int64_t B, int64_t H, int64_t L, int64_t S) {
  if (mask.dim() > 4) return Tensor();
  Shape s(4 - static_cast<size_t>(mask.dim()), 1);
  s.insert(s.end(), mask.shape().begin(), mask.shape().end());
  const bool fits = (s[0] == 1 || s[0] == B) && (s[1] == 1 || H == 1) && (s[2] == 1 || s[2] == L) && s[3] == S;
  return fits ? mask.detach().reshape(s) : Tensor();
}

// The mask as the kernels read it (the schema's [B, 1, L, S]): in T, clamped
// to kFusedAttentionMaskLimit (the schema says why), its rows a multiple of
// eight elements apart, and broadcast over B and L by stride 0, never by a dim
// of size 1 (the schema's layout, which every backend's kernel may rely on).
Tensor kernel_mask(const Tensor& mask4, DType dtype, int64_t B, int64_t L) {
  const double limit = kFusedAttentionMaskLimit;
  Tensor values = clamp(mask4, -limit, limit);
  if (values.dtype() != dtype) values = cast(values, dtype);
  const int64_t S = mask4.size(3), padded = (S + 7) / 8 * 8;
  Tensor rows;
  if (padded == S) {
    rows = detail::dense_detached(values);
  } else {
    Shape shape = mask4.shape();
    shape[3] = padded;
    rows = narrow(Tensor::empty(shape, dtype, mask4.device()), 3, 0, S);
    NoGradGuard no_grad;
    copy_(rows, values);
  }
  return rows.expand({B, 1, L, S});
}

// Why fused_attention cannot take these operands, or empty when it can.
std::string unfit_reason(const Tensor& q, const Tensor& k, const Tensor& v, const Tensor& mask) {
  if (q.dim() != 4 || k.dim() != 4 || v.dim() != 4)
    return "expected q [B, H, L, D], k [B, H, S, D] and v [B, H, S, Dv]";
  if (k.size(0) != q.size(0) || v.size(0) != q.size(0) || k.size(1) != q.size(1) || v.size(1) != q.size(1))
    return "q, k and v must share B and H (no broadcasting)";
  if (k.size(3) != q.size(3) || v.size(2) != k.size(2)) return "k must have q's D and v k's S";
  if (!q.is_floating_point() || k.dtype() != q.dtype() || v.dtype() != q.dtype())
    return "q, k and v must share one floating dtype";
  if (q.numel() == 0 || k.numel() == 0 || v.numel() == 0) return "empty operands";
  if (mask.defined()) {
    if (!mask.is_floating_point()) return "attn_mask must be an additive floating mask";
    if (mask.device() != q.device()) return "attn_mask must be on q's device";
    if (autograd::any_requires_grad({mask})) return "attn_mask requires grad, and the fused op gives it none";
    if (!mask_4d(mask, q.size(0), q.size(1), q.size(2), k.size(2)).defined())
      return "attn_mask must broadcast as [B, 1, L, S] (one row of keys for every head)";
  }
  return "";
}

struct Prepared {
  Tensor q, k, v, mask;  // the kernels' operands
  Tensor out, lse, rng;  // the outputs (lse when differentiated, rng with dropout)
  FusedAttentionAttrs attrs;
};

// Operands and outputs of the call, with attrs.seed and attrs.offset left for
// run_prepared() (a call that is not taken must not draw).
Prepared prepare(const Tensor& q, const Tensor& k, const Tensor& v, const Tensor& mask, double p, double scale) {
  Prepared c;
  c.q = operand(q);
  c.k = operand(k);
  c.v = operand(v);
  if (mask.defined())
    c.mask = kernel_mask(mask_4d(mask, q.size(0), q.size(1), q.size(2), k.size(2)), q.dtype(), q.size(0), q.size(2));
  c.out = empty_in_order_of(c.q, {q.size(0), q.size(1), q.size(2), v.size(3)}, q.dtype());
  // With dropout lse is written even when nothing records: a checkpointed
  // block's first forward then runs the very graph its recomputation runs.
  if (autograd::any_requires_grad({q, k, v}) || p > 0.0)
    c.lse = Tensor::empty({q.size(0), q.size(1), q.size(2)}, detail::acc_dtype(q.dtype()), q.device());
  if (p > 0.0) c.rng = Tensor::empty({2}, DType::int64, q.device());
  c.attrs.scale = scale;
  c.attrs.p = p;
  return c;
}

// grad_out as the backward kernels read it: in out's layout (the schema's
// contract; a backend planned the backward so).
Tensor grad_in_layout_of(const Tensor& g, const Tensor& out) {
  Tensor gd = g.dtype() == out.dtype() ? g.detach() : cast(g.detach(), out.dtype());
  if (gd.strides() == out.strides()) return gd;
  Tensor laid = empty_in_order_of(out, out.shape(), out.dtype());
  NoGradGuard no_grad;
  copy_(laid, gd);
  return laid;
}

Tensor run_prepared(const Tensor& q, const Tensor& k, const Tensor& v, Prepared c) {
  if (c.attrs.p > 0.0) {
    Generator& g = default_generator();
    c.attrs.seed = g.seed();
    c.attrs.offset = g.reserve(dropout_counters(c.q.size(0) * c.q.size(1) * c.q.size(2) * c.k.size(2)));
  }
  detail::run(forward_op(), {c.q, c.k, c.v, c.mask}, {c.out, c.lse, c.rng}, c.attrs);
  if (autograd::any_requires_grad({q, k, v})) {
    autograd::record("FusedAttentionBackward", {q, k, v}, {c.out},
                     [sq = SavedTensor(c.q), sk = SavedTensor(c.k), sv = SavedTensor(c.v), so = SavedTensor(c.out),
                      lse = c.lse, mask = c.mask, rng = c.rng, attrs = c.attrs](const BackwardContext& ctx) {
                       const Tensor q = sq.unpack(ctx.name()), k = sk.unpack(ctx.name()), v = sv.unpack(ctx.name());
                       const Tensor out = so.unpack(ctx.name());
                       Tensor gq = empty_in_order_of(q, q.shape(), q.dtype());
                       Tensor gk = empty_in_order_of(k, k.shape(), k.dtype());
                       Tensor gv = empty_in_order_of(v, v.shape(), v.dtype());
                       detail::run(backward_op(), {grad_in_layout_of(ctx.grad(0), out), q, k, v, out, lse, mask, rng},
                                   {gq, gk, gv}, attrs);
                       return std::vector<Tensor>{gq, gk, gv};
                     });
  }
  return c.out;
}

double default_scale(const Tensor& q, std::optional<double> scale) {
  return scale.value_or(1.0 / std::sqrt(static_cast<double>(q.size(-1))));
}

}  // namespace

bool fused_attention_enabled() { return enabled_flag().load(std::memory_order_relaxed); }
void set_fused_attention_enabled(bool on) { enabled_flag().store(on, std::memory_order_relaxed); }

Tensor fused_attention(const Tensor& q, const Tensor& k, const Tensor& v, const Tensor& attn_mask, double dropout_p,
                       bool training, std::optional<double> scale) {
  if (auto ac = detail::autocast("fused_attention", q, k, v))
    return fused_attention(ac[0], ac[1], ac[2], attn_mask, dropout_p, training, scale);
  HEARTH_CHECK(q.defined() && k.defined() && v.defined(), ValueError, "[fused_attention] q, k and v must be defined");
  const std::string why = unfit_reason(q, k, v, attn_mask);
  HEARTH_CHECK(why.empty(), ValueError, "[fused_attention] ", why, "; got q ", q.shape_string(), ", k ",
               k.shape_string(), ", v ", v.shape_string(),
               attn_mask.defined() ? ", attn_mask " + attn_mask.shape_string() : std::string(),
               " (scaled_dot_product_attention takes every case)");
  HEARTH_CHECK(dropout_p >= 0.0 && dropout_p < 1.0, ValueError, "[fused_attention] dropout_p must be in [0, 1), got ",
               dropout_p);
  return run_prepared(q, k, v, prepare(q, k, v, attn_mask, training ? dropout_p : 0.0, default_scale(q, scale)));
}

bool attention_runs_fused(const Tensor& q, const Tensor& k, const Tensor& v, const Tensor& attn_mask, double dropout_p,
                          bool training) {
  if (!fused_attention_enabled() || !q.defined() || !k.defined() || !v.defined()) return false;
  if (!unfit_reason(q, k, v, attn_mask).empty()) return false;
  if (!supports(forward_op(), q.device().kind, q.dtype())) return false;
  const Prepared c = prepare(q, k, v, attn_mask, training ? dropout_p : 0.0, default_scale(q, std::nullopt));
  return detail::accepts(forward_op(), {c.q, c.k, c.v, c.mask}, {c.out, c.lse, c.rng}, c.attrs);
}

namespace detail {

std::optional<Tensor> fused_attention_if_taken(const Tensor& q, const Tensor& k, const Tensor& v,
                                               const Tensor& attn_mask, double p, double scale) {
  if (!fused_attention_enabled() || !unfit_reason(q, k, v, attn_mask).empty()) return std::nullopt;
  // Without a kernel of this dtype nothing needs preparing.
  if (!supports(forward_op(), q.device().kind, q.dtype())) return std::nullopt;
  Prepared c = prepare(q, k, v, attn_mask, p, scale);
  if (!accepts(forward_op(), {c.q, c.k, c.v, c.mask}, {c.out, c.lse, c.rng}, c.attrs)) return std::nullopt;
  return run_prepared(q, k, v, std::move(c));
}

}  // namespace detail

// The compositions of fused_attention and its backward (the contracts of
// hearth/dispatch/schemas/fused_attention.h): the scores, the log-sum-exp
// and the weights in the accumulation dtype A, products of T operands as the
// kernels round them, and dropout as the dropout op of element
// ((b * H + h) * L + l) * S + s with the forward's seed and offset (the CPU
// kernel's keep, so the composition drops what it drops). The weights live
// only while the call runs: the backward recomputes them from lse.
namespace {

OpHandle dropout_op() {
  static OpHandle op = detail::op_handle(OpId::dropout);
  return op;
}

// x = scale * q k^T + mask, [B, H, L, S] in A.
Tensor attention_scores(const Tensor& q, const Tensor& k, const Tensor& mask, double scale, DType acc) {
  Tensor x = mul(matmul(detail::as_dtype(q, acc), transpose(detail::as_dtype(k, acc), -2, -1)), scale);
  return mask.defined() ? add(x, detail::as_dtype(mask, acc)) : x;
}

// The weights dropped and scaled as dropout drops them (w dense in A);
// keep, when wanted, receives the mask.
Tensor dropped_weights(const Tensor& w, const FusedAttentionAttrs& a, uint64_t seed, uint64_t offset,
                       Tensor* keep = nullptr) {
  const int64_t n = w.numel();
  Tensor wd = Tensor::empty(w.shape(), w.dtype(), w.device());
  Tensor mask = Tensor::empty({n}, DType::bool_, w.device());
  detail::run(dropout_op(), {w.reshape({n})}, {wd.reshape({n}), mask}, DropoutAttrs{seed, offset, a.p});
  if (keep) *keep = mask.view(w.shape());
  return wd;
}

void compose_fused_attention(OpCall& call) {
  detail::CompositionScope scope;
  const auto& a = call.attrs<FusedAttentionAttrs>();
  const Tensor &q = call.in(0), &k = call.in(1), &v = call.in(2);
  const Tensor mask = call.inputs.size() > 3 ? call.in(3) : Tensor();
  const DType acc = detail::acc_dtype(q.dtype());
  const Tensor x = attention_scores(q, k, mask, a.scale, acc);
  // The row's largest score subtracted first (and not when infinite, as softmax does).
  const Tensor m = amax(x, {-1}, true);
  const Tensor shift = where(isfinite(m), m, 0.0);
  const Tensor lse = add(log(sum(exp(sub(x, shift)), {-1}, true)), shift);
  Tensor w = contiguous(exp(sub(x, lse)));
  if (a.p > 0.0) w = dropped_weights(w, a, a.seed, a.offset);
  copy_(call.out(0), matmul(detail::as_dtype(w, q.dtype()), v));
  detail::write_output(call.outputs.size() > 1 ? call.out(1) : Tensor(), squeeze(lse, -1));
  if (call.outputs.size() > 2 && call.out(2).defined()) {
    const std::vector<int64_t> drawn{static_cast<int64_t>(a.seed), static_cast<int64_t>(a.offset)};
    copy_(call.out(2), tensor(drawn, Shape{2}, Device()));
  }
}

void compose_fused_attention_backward(OpCall& call) {
  detail::CompositionScope scope;
  const auto& a = call.attrs<FusedAttentionAttrs>();
  const Tensor &grad_out = call.in(0), &q = call.in(1), &k = call.in(2), &v = call.in(3), &out = call.in(4),
               &lse = call.in(5);
  const Tensor mask = call.inputs.size() > 6 ? call.in(6) : Tensor();
  const Tensor rng = call.inputs.size() > 7 ? call.in(7) : Tensor();
  const DType t = q.dtype(), acc = detail::acc_dtype(t);
  const Tensor w = contiguous(exp(sub(attention_scores(q, k, mask, a.scale, acc), unsqueeze(lse, -1))));
  const Tensor go = detail::as_dtype(grad_out, acc);
  Tensor dw = matmul(go, transpose(detail::as_dtype(v, acc), -2, -1));
  Tensor wd = w;
  if (a.p > 0.0) {
    // The forward's seed and offset, as it wrote them.
    const Tensor drawn = transfer(rng, Device());
    const int64_t* r = static_cast<const int64_t*>(drawn.data_ptr());
    Tensor keep;
    wd = dropped_weights(w, a, static_cast<uint64_t>(r[0]), static_cast<uint64_t>(r[1]), &keep);
    dw = where(keep, mul(dw, 1.0 / (1.0 - a.p)), 0.0);
  }
  const Tensor dsum = sum(mul(go, detail::as_dtype(out, acc)), {-1}, true);
  const Tensor ds = detail::as_dtype(mul(mul(w, sub(dw, dsum)), a.scale), t);
  detail::write_output(call.out(0), matmul(ds, k));
  detail::write_output(call.out(1), matmul(transpose(ds, -2, -1), q));
  detail::write_output(call.out(2), matmul(transpose(detail::as_dtype(wd, t), -2, -1), grad_out));
}

HEARTH_REGISTER_COMPOSITION(fused_attention, compose_fused_attention);
HEARTH_REGISTER_COMPOSITION(fused_attention_backward, compose_fused_attention_backward);

}  // namespace

}  // namespace hearth
