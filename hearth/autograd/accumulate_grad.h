// The node at a leaf: adds the incoming gradient into `.grad`.
#pragma once

#include <memory>

#include "hearth/autograd/node.h"

namespace hearth::autograd {

class AccumulateGrad final : public Node {
 public:
  explicit AccumulateGrad(const Tensor& leaf);
  std::vector<Tensor> apply(std::vector<Tensor>&& grads) override;
  bool casts_incoming_gradients() const override { return true; }
  // .grad itself (added into), the memory of a .grad zero_grad left reading
  // as zero, or a fresh tensor that becomes .grad (both overwritten); none
  // where the plain path must run (someone else holds .grad, it requires
  // grad, or it is not a dense tensor of the leaf's dtype and layout).
  GradDestination gradient_destination(size_t slot) override;

 private:
  Tensor leaf_;
  // The last destination offered, by identity only (a reference would count
  // as a holder of .grad): the gradient apply() receives is it exactly when
  // the producer wrote there.
  std::weak_ptr<TensorImpl> offered_;
};

}  // namespace hearth::autograd
