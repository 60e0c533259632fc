// The autograd methods of Tensor.
#include "hearth/autograd/engine.h"
#include "hearth/autograd/node.h"
#include "hearth/core/errors.h"
#include "hearth/core/tensor.h"
#include "hearth/ops/factory.h"

namespace hearth {

autograd::AutogradMeta& Tensor::ensure_autograd_meta() const {
  if (!impl_->autograd) impl_->autograd = std::make_shared<autograd::AutogradMeta>();
  return *impl_->autograd;
}

bool Tensor::requires_grad() const { return impl_->autograd && impl_->autograd->requires_grad; }

const Tensor& Tensor::requires_grad_(bool value) const {
  HEARTH_CHECK(!value || is_floating(dtype()), TypeError,
               "[requires_grad_] only floating-point tensors can require gradients, got ", dtype_name(dtype()));
  HEARTH_CHECK(is_leaf(), AutogradError,
               "[requires_grad_] can only change requires_grad of leaf tensors; use detach() first");
  ensure_autograd_meta().requires_grad = value;
  return *this;
}

Tensor Tensor::grad() const {
  if (!impl_->autograd) return Tensor();
  autograd::AutogradMeta& m = *impl_->autograd;
  if (m.grad_reads_as_zero) {
    m.grad.zero_();
    m.grad_reads_as_zero = false;
  }
  return m.grad;
}

void Tensor::set_grad(const Tensor& g) const {
  if (g.defined()) {
    HEARTH_CHECK(g.shape() == shape(), ShapeError, "[grad] assigned gradient has shape ", g.shape_string(),
                 " but the tensor has shape ", shape_string());
  }
  ensure_autograd_meta().grad = g;
  impl_->autograd->grad_reads_as_zero = false;
}

const Tensor& Tensor::zero_grad_(bool set_to_none) const {
  if (impl_->autograd && impl_->autograd->grad.defined()) {
    autograd::AutogradMeta& m = *impl_->autograd;
    if (set_to_none) {
      m.grad = Tensor();
      m.grad_reads_as_zero = false;
    } else if (m.grad.impl().use_count() == 1 && m.grad.storage().use_count() == 1) {
      m.grad_reads_as_zero = true;  // filled when first read, or overwritten by the next backward
    } else {
      m.grad.zero_();  // someone holds it: they see the zeros now, as in PyTorch
      m.grad_reads_as_zero = false;
    }
  }
  return *this;
}

bool Tensor::is_leaf() const { return !impl_->autograd || impl_->autograd->grad_fn == nullptr; }

std::shared_ptr<autograd::Node> Tensor::grad_fn() const {
  return impl_->autograd ? impl_->autograd->grad_fn : nullptr;
}

void Tensor::backward(const Tensor& gradient, bool retain_graph) const {
  Tensor g = gradient;
  if (!g.defined()) {
    HEARTH_CHECK(numel() == 1, AutogradError, "[backward] grad can be implicitly created only for scalar outputs; "
                 "this tensor has shape ", shape_string(), ", so pass a gradient of that shape");
    g = ones(shape(), dtype(), device());
  } else {
    HEARTH_CHECK(g.shape() == shape(), ShapeError, "[backward] gradient has shape ", g.shape_string(),
                 " but the output has shape ", shape_string());
    HEARTH_CHECK(g.device() == device(), DeviceError, "[backward] gradient is on ", g.device().str(),
                 " but the output is on ", device().str());
  }
  autograd::run_backward({*this}, {g}, retain_graph);
}

Tensor Tensor::detach() const {
  auto impl = std::make_shared<TensorImpl>(*impl_);
  impl->autograd = nullptr;
  return Tensor(std::move(impl));
}

}  // namespace hearth
