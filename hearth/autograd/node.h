// The recorded graph: one Node per differentiable op call, edges to the nodes
// that produced its inputs, and the saved tensors its backward formula needs.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "hearth/core/tensor.h"

namespace hearth::autograd {

class Node;

struct Edge {
  std::shared_ptr<Node> fn;  // null: this input needs no gradient
  uint32_t input_nr = 0;     // which of fn's outputs the gradient belongs to
  bool valid() const { return fn != nullptr; }
};

// Describes an output, so a missing gradient can be materialised as zeros.
struct OutputMeta {
  Shape shape;
  DType dtype;
  Device device;
};

// Where a gradient may be written directly: memory its final consumer (a
// leaf's AccumulateGrad: .grad) would otherwise copy or add it into. With
// `accumulate` the tensor holds a sum the gradient is added to (beta = 1);
// without, its values are garbage and the gradient overwrites them (beta = 0).
struct GradDestination {
  Tensor tensor;
  bool accumulate = false;
  bool defined() const { return tensor.defined(); }
};

class Node : public std::enable_shared_from_this<Node> {
 public:
  explicit Node(std::string name);
  virtual ~Node() = default;

  // grads[i] is the gradient w.r.t. output i (never undefined: the engine fills
  // zeros). Returns one gradient per next edge (undefined where not needed).
  virtual std::vector<Tensor> apply(std::vector<Tensor>&& grads) = 0;
  // Frees saved tensors after a backward without retain_graph.
  virtual void release_saved() {}

  // Whether the formula can add its gradient for `input` into `partial`, the
  // sum of that input's other gradients so far, writing the sum into
  // partial's memory (a convolution's backward-data and a GEMM do it in their
  // epilogue, for one extra read instead of the engine's separate add). The
  // engine has already checked that nobody else holds `partial` and that it
  // has the input's shape, dtype and device; the node answers for the layout
  // and dtype it writes. See accumulate_into.
  virtual bool can_accumulate_input_grad(size_t input, const Tensor& partial) const;

  // Whether apply() takes its gradients in any floating dtype and casts them
  // itself (a leaf's AccumulateGrad, which casts while it writes .grad). The
  // engine then leaves them as they come, and a cast's backward feeding such a
  // node hands its gradient on uncast: one pass over the gradient instead of
  // a cast and a copy (every weight autocast casts, each step).
  virtual bool casts_incoming_gradients() const { return false; }

  // Whether apply() hands its one incoming gradient on to next_edges[0] as it
  // comes, in whatever floating dtype (a cast whose next node casts incoming
  // gradients itself). The engine may offer that next node's destination
  // (gradient_destination) through this one.
  virtual bool forwards_gradient() const { return false; }

  // Where the gradient for output `slot` may be written when it is the only
  // one this node gets (a leaf's AccumulateGrad offers .grad, or memory that
  // becomes .grad). apply() then receives that very tensor and finds the work
  // done. Undefined where the node keeps its plain path. See destinations.
  virtual GradDestination gradient_destination(size_t slot);

  // Whether the formula can write its gradient for `input` into `destination`
  // (offered by the node that input's gradient goes to, through a cast: a
  // GEMM with a float32 output from bfloat16 operands). The node answers for
  // the dtype and layout it can write.
  virtual bool can_write_input_grad_into(size_t input, const Tensor& destination) const;

  // Partial sums the engine hands over for the next apply(), one slot per next
  // edge (undefined where none; empty when none at all). A formula that takes
  // one (BackwardContext::take_accumulate_into) returns partial + its own
  // gradient for that input; one left here is added by the engine as before.
  // The engine clears it after apply().
  std::vector<Tensor> accumulate_into;
  // Destinations the engine hands over for the next apply(), one slot per next
  // edge (undefined where none; empty when none at all). A formula that takes
  // one (BackwardContext::take_gradient_destination) writes its gradient for
  // that input there and returns that tensor. The engine clears it after apply().
  std::vector<GradDestination> destinations;

  const std::string& name() const { return name_; }
  uint64_t sequence_nr() const { return sequence_nr_; }

  std::vector<Edge> next_edges;
  std::vector<OutputMeta> outputs;

 private:
  std::string name_;
  uint64_t sequence_nr_;
};

// A tensor kept for backward. Stores a detached alias (no reference cycle through
// the graph) and the version at save time, so an in-place write in between is caught.
class SavedTensor {
 public:
  SavedTensor() = default;
  explicit SavedTensor(const Tensor& t);
  // Throws AutogradError naming `node` if the tensor was modified in place.
  Tensor unpack(const std::string& node) const;
  bool defined() const { return data_.defined(); }
  void reset() { data_ = Tensor(); }

 private:
  Tensor data_;
  uint32_t version_ = 0;
};

// Per-tensor autograd state.
struct AutogradMeta {
  bool requires_grad = false;
  Tensor grad;
  // zero_grad(set_to_none=false) on a gradient nobody else holds defers the
  // fill: `grad` keeps its memory and reads as zero. The next accumulation
  // overwrites it (one copy instead of a fill and an add), and Tensor::grad()
  // fills it first if it is read before that.
  bool grad_reads_as_zero = false;
  std::shared_ptr<Node> grad_fn;  // null for leaves
  uint32_t output_nr = 0;
  std::weak_ptr<Node> grad_accumulator;  // leaves: the AccumulateGrad node, shared by all uses
  // Called after a gradient is accumulated into a leaf (data-parallel all-reduce hooks).
  std::vector<std::function<void(const Tensor&)>> post_accumulate_hooks;
};

// Where a gradient for `t` must go: its grad_fn, its accumulator, or nowhere.
Edge gradient_edge(const Tensor& t);

}  // namespace hearth::autograd
