#include "hearth/autograd/accumulate_grad.h"

#include "hearth/autograd/grad_mode.h"
#include "hearth/ops/elementwise.h"
#include "hearth/ops/view.h"

namespace hearth::autograd {

AccumulateGrad::AccumulateGrad(const Tensor& leaf) : Node("AccumulateGrad"), leaf_(leaf) {
  outputs.push_back(OutputMeta{leaf.shape(), leaf.dtype(), leaf.device()});
}

namespace {

// Whether `grad` may be written in place: nobody else holds it or its memory,
// it is no part of a graph, and it is dense in the leaf's dtype and format.
bool owned_dense_grad(const Tensor& grad, const Tensor& leaf) {
  return grad.impl().use_count() == 1 && grad.storage().use_count() == 1 && !grad.requires_grad() &&
         grad.dtype() == leaf.dtype() && grad.shape() == leaf.shape() && grad.device() == leaf.device() &&
         grad.is_contiguous(leaf.suggest_memory_format());
}

}  // namespace

GradDestination AccumulateGrad::gradient_destination(size_t slot) {
  if (slot != 0 || !is_floating(leaf_.dtype())) return {};
  AutogradMeta& m = leaf_.ensure_autograd_meta();
  GradDestination d;
  if (!m.grad.defined()) {
    // .grad takes the leaf's own memory format, as below.
    d.tensor = Tensor::empty(leaf_.shape(), leaf_.dtype(), leaf_.device(), leaf_.suggest_memory_format());
  } else if (owned_dense_grad(m.grad, leaf_)) {
    d.tensor = m.grad;
    d.accumulate = !m.grad_reads_as_zero;
  } else {
    return {};
  }
  offered_ = d.tensor.impl();
  return d;
}

std::vector<Tensor> AccumulateGrad::apply(std::vector<Tensor>&& grads) {
  NoGradGuard no_grad;
  AutogradMeta& m = leaf_.ensure_autograd_meta();
  Tensor g = std::move(grads[0]);
  // Compared without holding it: a second reference to .grad would send the
  // plain path below out of place.
  const bool written = !offered_.expired() && g.impl() == offered_.lock() &&
                       (!m.grad.defined() || m.grad.impl() == g.impl());
  offered_.reset();
  if (written) {
    // The producer wrote the gradient into the destination offered: .grad
    // holds the result already (a fresh one becomes .grad).
    if (!m.grad.defined()) m.grad = std::move(g);
    m.grad_reads_as_zero = false;
    for (auto& hook : m.post_accumulate_hooks) hook(leaf_);
    return {};
  }
  if (m.grad.defined() && m.grad_reads_as_zero && !g.requires_grad()) {
    // Zeroed by zero_grad(set_to_none=false) and held by nobody: overwrite it
    // in its own memory, casting on the way (one pass instead of fill, cast, add).
    m.grad.copy_(g);
    m.grad_reads_as_zero = false;
    for (auto& hook : m.post_accumulate_hooks) hook(leaf_);
    return {};
  }
  if (m.grad_reads_as_zero) {
    m.grad.zero_();
    m.grad_reads_as_zero = false;
  }
  if (g.dtype() != leaf_.dtype()) g = g.to(leaf_.dtype());
  if (!m.grad.defined()) {
    // .grad takes the leaf's own memory format (PyTorch's layout contract:
    // optimizers read a parameter and its gradient as matching dense arrays),
    // so an NCHW weight fed channels_last gradients still gets an NCHW .grad.
    // A gradient shared with another leaf (add's backward hands both sides the
    // same tensor) is cloned so that in-place updates of one .grad stay local.
    const MemoryFormat fmt = leaf_.suggest_memory_format();
    if (!g.is_contiguous(fmt))
      m.grad = contiguous(g, fmt);
    else
      m.grad = g.impl().use_count() > 1 || g.storage().use_count() > 1 ? g.clone() : g;
  } else if (m.grad.impl().use_count() == 1 && m.grad.storage().use_count() == 1 && !m.grad.requires_grad() &&
             !g.requires_grad()) {
    // Nobody else holds this .grad or its memory: add in place, as PyTorch
    // does. It keeps the gradient's memory across steps (zero_grad with
    // set_to_none=false then reallocates nothing), which a recorded step
    // graph needs.
    m.grad.add_(g);
  } else {
    m.grad = add(m.grad, g);  // out of place: the user holds this .grad
  }
  for (auto& hook : m.post_accumulate_hooks) hook(leaf_);
  return {};
}

}  // namespace hearth::autograd
