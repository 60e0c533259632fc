// The node at a leaf: adds the incoming gradient into `.grad`.
#pragma once

#include "hearth/autograd/node.h"

namespace hearth::autograd {

class AccumulateGrad final : public Node {
 public:
  explicit AccumulateGrad(const Tensor& leaf);
  std::vector<Tensor> apply(std::vector<Tensor>&& grads) override;
  bool casts_incoming_gradients() const override { return true; }

 private:
  Tensor leaf_;
};

}  // namespace hearth::autograd
