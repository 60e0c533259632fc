#include "hearth/autograd/accumulate_grad.h"

#include "hearth/autograd/grad_mode.h"
#include "hearth/ops/elementwise.h"
#include "hearth/ops/view.h"

namespace hearth::autograd {

AccumulateGrad::AccumulateGrad(const Tensor& leaf) : Node("AccumulateGrad"), leaf_(leaf) {
  outputs.push_back(OutputMeta{leaf.shape(), leaf.dtype(), leaf.device()});
}

std::vector<Tensor> AccumulateGrad::apply(std::vector<Tensor>&& grads) {
  NoGradGuard no_grad;
  AutogradMeta& m = leaf_.ensure_autograd_meta();
  Tensor g = std::move(grads[0]);
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
