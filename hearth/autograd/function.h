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
#include <memory>
#include <string>
#include <vector>

#include "hearth/autograd/node.h"

namespace hearth::autograd {

class BackwardContext {
 public:
  BackwardContext(const std::string& name, std::vector<Tensor>& grads, const std::vector<Edge>& edges,
                  std::vector<Tensor>* accumulate_into = nullptr,
                  std::vector<GradDestination>* destinations = nullptr)
      : name_(name), grads_(grads), edges_(edges), accumulate_into_(accumulate_into), destinations_(destinations) {}
  const Tensor& grad(size_t output) const { return grads_[output]; }
  size_t num_grads() const { return grads_.size(); }
  // Whether input i needs a gradient; skip computing it otherwise.
  bool needs(size_t input) const { return input < edges_.size() && edges_[input].valid(); }
  const std::string& name() const { return name_; }
  // Whether input i's gradient goes to a node that casts incoming gradients
  // itself (Node::casts_incoming_gradients), so it may be handed on in any
  // floating dtype.
  bool next_casts_gradient(size_t input) const {
    return needs(input) && edges_[input].fn->casts_incoming_gradients();
  }
  // The partial sum of input i's gradient the engine handed over (only for an
  // input the node was recorded as accumulating; undefined otherwise). Taking
  // it is a promise: the formula returns partial + its own gradient for input
  // i, written into the partial's memory where the backend can. A partial not
  // taken is added by the engine.
  Tensor take_accumulate_into(size_t input) const {
    if (!accumulate_into_ || input >= accumulate_into_->size()) return Tensor();
    return std::move((*accumulate_into_)[input]);
  }
  // The destination of input i's final gradient the engine handed over (only
  // for an input the node was recorded as writing, WritingInput; undefined
  // otherwise). Taking it is a promise: the formula writes its gradient for
  // input i into the tensor (adding it to the values there when `accumulate`)
  // and returns that tensor as the gradient. One not taken costs nothing.
  GradDestination take_gradient_destination(size_t input) const {
    if (!destinations_ || input >= destinations_->size()) return {};
    return std::move((*destinations_)[input]);
  }

 private:
  const std::string& name_;
  std::vector<Tensor>& grads_;
  const std::vector<Edge>& edges_;
  std::vector<Tensor>* accumulate_into_;
  std::vector<GradDestination>* destinations_;
};

using BackwardFn = std::function<std::vector<Tensor>(const BackwardContext&)>;

// An input whose gradient the formula can add into a partial sum it is handed
// (BackwardContext::take_accumulate_into): the engine offers a partial that is
// dense in `format` and of `dtype`, the layout and dtype the formula gives
// that gradient itself.
struct AccumulatingInput {
  size_t input = 0;
  MemoryFormat format = MemoryFormat::contiguous;
  DType dtype = DType::float32;
};

// An input whose final gradient the formula can write into a destination its
// next node offers through a cast (BackwardContext::take_gradient_destination,
// Node::gradient_destination): a tensor of `dtype`, dense in `format`, which
// may differ from the dtype the formula gives that gradient otherwise (a
// float32 .grad for the gradient of a weight's bfloat16 cast).
struct WritingInput {
  size_t input = 0;
  MemoryFormat format = MemoryFormat::contiguous;
  DType dtype = DType::float32;
};

// Whether recording is on and any input requires grad.
bool any_requires_grad(std::initializer_list<Tensor> inputs);
bool any_requires_grad(const std::vector<Tensor>& inputs);

// Attaches a node with `fn` as grad_fn of every output (outputs become non-leaf
// tensors requiring grad). No-op when no input requires grad or grad mode is off.
// `accumulating`: the inputs whose gradients `fn` can add into a partial sum;
// `writing`: those it can write into a destination.
void record(const std::string& name, const std::vector<Tensor>& inputs, const std::vector<Tensor>& outputs,
            BackwardFn fn, std::vector<AccumulatingInput> accumulating = {}, std::vector<WritingInput> writing = {});

// record() for a node of its own class: wires `node` (whose name and apply()
// are set) to the inputs and outputs as record() wires its closure's node.
void record_node(const std::shared_ptr<Node>& node, const std::vector<Tensor>& inputs,
                 const std::vector<Tensor>& outputs);

// The error of apply() on a node whose graph was released by an earlier
// backward without retain_graph.
[[noreturn]] void throw_released(const std::string& name);

// Sums `grad` down to `shape`: the backward of broadcasting.
Tensor sum_to_shape(const Tensor& grad, const Shape& shape);

}  // namespace hearth::autograd
