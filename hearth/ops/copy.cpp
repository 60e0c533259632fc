// copy_, cast, contiguous: moving values between layouts, dtypes and devices;
// fill_: writing one value everywhere.
#include "hearth/dispatch/schemas/copy.h"

#include <memory>

#include "hearth/autograd/function.h"
#include "hearth/autograd/grad_mode.h"
#include "hearth/ops/cast_from_values.h"
#include "hearth/ops/elementwise.h"
#include "hearth/ops/op_utils.h"
#include "hearth/ops/view.h"

namespace hearth {

const Tensor& copy_(const Tensor& dst, const Tensor& src) {
  detail::check_defined("copy_", dst, "self");
  detail::check_defined("copy_", src, "src");
  detail::check_inplace_allowed("copy_", dst);
  HEARTH_CHECK(broadcast_shapes(dst.shape(), src.shape(), "copy_") == dst.shape(), ShapeError,
               "[copy_] source of shape ", src.shape_string(), " does not broadcast to the destination shape ",
               dst.shape_string());
  if (dst.numel() == 0) return dst;
  copy_into(dst, src.shape() == dst.shape() ? src : expand(src.detach(), dst.shape()));
  dst.bump_version();
  return dst;
}

const Tensor& fill_(const Tensor& t, const Scalar& value) {
  static OpHandle op = detail::op_handle(OpId::fill_);
  detail::check_inplace_allowed("fill_", t);
  if (t.numel() == 0) return t;
  detail::run(op, {}, {t}, FillAttrs{value});
  t.bump_version();
  return t;
}

namespace {

// The cast's backward: the gradient cast back to the input's dtype. Where the
// input is a leaf, its AccumulateGrad casts while it writes .grad, so the
// cast here would be a pass of its own (autocast's weight casts, every step):
// the gradient is handed on as it comes, and the node says so
// (forwards_gradient), which lets the engine offer the leaf's .grad to the
// op that produces the gradient (a float32 weight gradient from a bfloat16
// GEMM, engine.cpp).
class CastBackward final : public autograd::Node {
 public:
  explicit CastBackward(DType from) : Node("CastBackward"), from_(from) {}

  bool forwards_gradient() const override {
    return next_edges.size() == 1 && next_edges[0].valid() && next_edges[0].fn->casts_incoming_gradients();
  }
  // A float32 tensor read both as itself and through autocast's half cast
  // (BERT's hidden states: the residual, and the projections' input) gets a
  // float32 gradient and a half one. Handed the float32 sum so far, this node
  // adds its half gradient into it, widening as it reads (add_'s kernel): the
  // cast's pass over the gradient goes, and the sum is the plain path's
  // add(partial, cast(g)) bit for bit.
  bool can_accumulate_input_grad(size_t input, const Tensor& partial) const override {
    return input == 0 && from_ == DType::float32 && partial.dtype() == DType::float32 && !forwards_gradient();
  }
  std::vector<Tensor> apply(std::vector<Tensor>&& grads) override {
    if (released_) autograd::throw_released(name());
    if (forwards_gradient()) return {std::move(grads[0])};
    if (!accumulate_into.empty() && accumulate_into[0].defined()) {
      Tensor sum = std::move(accumulate_into[0]);
      accumulate_into[0] = Tensor();
      NoGradGuard no_grad;
      add_(sum, grads[0]);
      return {sum};
    }
    return {cast(grads[0], from_)};
  }
  // Nothing is saved, but a second backward through a released graph must
  // fail here as it does at every other node.
  void release_saved() override { released_ = true; }

 private:
  DType from_;
  bool released_ = false;
};

// Records `out` (holding a's values in out's dtype) as a's cast.
void record_cast(const Tensor& a, const Tensor& out) {
  if (!is_floating(out.dtype()) || !is_floating(a.dtype())) return;
  if (!autograd::any_requires_grad({a})) return;
  autograd::record_node(std::make_shared<CastBackward>(a.dtype()), {a}, {out});
}

}  // namespace

Tensor cast(const Tensor& a, DType dtype) {
  detail::check_defined("cast", a, "input");
  if (a.dtype() == dtype) return a;
  Tensor out = detail::empty_like_inputs(a.shape(), dtype, a.device(), {a});
  if (out.numel() > 0) copy_into(out, a);
  record_cast(a, out);
  return out;
}

namespace detail {

Tensor cast_from_values(const Tensor& a, const Tensor& values) {
  check_defined("cast", a, "input");
  HEARTH_CHECK(values.shape() == a.shape() && values.device() == a.device(), ShapeError,
               "[cast] the values of shape ", values.shape_string(), " on ", values.device().str(),
               " cannot stand for the cast of a tensor of shape ", a.shape_string(), " on ", a.device().str());
  Tensor out = values.detach();  // a tensor of its own: the graph node goes on it, not on `values`
  record_cast(a, out);
  return out;
}

}  // namespace detail

Tensor contiguous(const Tensor& a) { return contiguous(a, MemoryFormat::contiguous); }

Tensor contiguous(const Tensor& a, MemoryFormat fmt) {
  detail::check_defined("contiguous", a, "input");
  if (a.is_contiguous(fmt)) return a;
  Tensor out = Tensor::empty(a.shape(), a.dtype(), a.device(), fmt);
  copy_into(out, a);
  autograd::record("CloneBackward", {a}, {out},
                   [](const autograd::BackwardContext& c) { return std::vector<Tensor>{c.grad(0)}; });
  return out;
}

}  // namespace hearth
