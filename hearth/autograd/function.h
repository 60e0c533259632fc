// How ops record themselves: after computing outputs, an op calls record() with
// its inputs, outputs and a backward formula. The formula receives the output
// gradients and returns one gradient per input (undefined where none is needed).
//
//   if (autograd::any_requires_grad({a, b})) {
//     autograd::record("MulBackward", {a, b}, {out},
//         [sa = autograd::SavedTensor(a), sb = autograd::SavedTensor(b)](const autograd::BackwardContext& ctx) {
//           const Tensor& g = ctx.grad(0);
//           return std::vector<Tensor>{ctx.needs(0) ? g * sb.unpack(ctx.name()) : Tensor(), ...};
//         });
//   }
#pragma once

#include <functional>
#include <initializer_list>
#include <string>
#include <vector>

#include "hearth/autograd/node.h"

namespace hearth::autograd {

class BackwardContext {
 public:
  BackwardContext(const std::string& name, std::vector<Tensor>& grads, const std::vector<Edge>& edges)
      : name_(name), grads_(grads), edges_(edges) {}
  const Tensor& grad(size_t output) const { return grads_[output]; }
  size_t num_grads() const { return grads_.size(); }
  // Whether input i needs a gradient; skip computing it otherwise.
  bool needs(size_t input) const { return input < edges_.size() && edges_[input].valid(); }
  const std::string& name() const { return name_; }

 private:
  const std::string& name_;
  std::vector<Tensor>& grads_;
  const std::vector<Edge>& edges_;
};

using BackwardFn = std::function<std::vector<Tensor>(const BackwardContext&)>;

// Whether recording is on and any input requires grad.
bool any_requires_grad(std::initializer_list<Tensor> inputs);
bool any_requires_grad(const std::vector<Tensor>& inputs);

// Attaches a node with `fn` as grad_fn of every output (outputs become non-leaf
// tensors requiring grad). No-op when no input requires grad or grad mode is off.
void record(const std::string& name, const std::vector<Tensor>& inputs, const std::vector<Tensor>& outputs,
            BackwardFn fn);

// Sums `grad` down to `shape`: the backward of broadcasting.
Tensor sum_to_shape(const Tensor& grad, const Shape& shape);

}  // namespace hearth::autograd
