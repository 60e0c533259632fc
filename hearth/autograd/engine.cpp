#include "hearth/autograd/engine.h"

#include <atomic>
#include <queue>
#include <unordered_map>
#include <unordered_set>

#include "hearth/autograd/grad_mode.h"
#include "hearth/autograd/node.h"
#include "hearth/core/errors.h"
#include "hearth/dispatch/anomaly_check.h"
#include "hearth/ops/autocast.h"
#include "hearth/ops/elementwise.h"
#include "hearth/ops/factory.h"

namespace hearth::autograd {
namespace {

struct ByLatest {  // later-created nodes first: a valid reverse topological order tie-break
  bool operator()(Node* a, Node* b) const { return a->sequence_nr() < b->sequence_nr(); }
};

// A backward formula that returns the wrong shape or device would otherwise
// surface far away (a wrongly shaped .grad, a device mismatch in an optimizer);
// catching it here names the formula at fault.
void check_input_grad(const Node& node, size_t input, const Tensor& g, const Node& next, uint32_t slot) {
  if (!g.defined() || slot >= next.outputs.size()) return;
  const OutputMeta& want = next.outputs[slot];
  HEARTH_CHECK(g.shape() == want.shape, AutogradError, "[autograd] ", node.name(), " returned a gradient of shape ",
               g.shape_string(), " for input ", input, ", which has shape ", shape_str(want.shape));
  HEARTH_CHECK(g.device() == want.device, AutogradError, "[autograd] ", node.name(), " returned a gradient on ",
               g.device().str(), " for input ", input, ", which lives on ", want.device.str());
}

// A node that casts its incoming gradients itself may get them in another
// floating dtype than its output's (a cast's backward hands them on uncast);
// two of them are summed in the output's dtype, as they were before.
Tensor in_output_dtype(Tensor g, const Node& next, size_t slot) {
  if (next.casts_incoming_gradients() && slot < next.outputs.size() && g.dtype() != next.outputs[slot].dtype &&
      is_floating(next.outputs[slot].dtype))
    return cast(g, next.outputs[slot].dtype);
  return g;
}

void accumulate(std::vector<Tensor>& slot_buffer, const Node& next, size_t slot, Tensor g) {
  if (!g.defined()) return;
  Tensor& cur = slot_buffer[slot];
  cur = cur.defined() ? add(in_output_dtype(std::move(cur), next, slot), in_output_dtype(std::move(g), next, slot))
                      : std::move(g);
}

std::atomic<bool>& fused_accumulation_flag() {
  // On: the other path stays as the reference tests compare this one with.
  static std::atomic<bool> on{true};
  return on;
}

std::atomic<uint64_t> g_fused_accumulations{0};

using Buffers = std::unordered_map<Node*, std::vector<Tensor>>;

// Whether `partial`, the gradient sum waiting in a buffer slot of an input
// described by `meta`, may be written in place by the formula of the next
// contribution: nobody but the buffer holds the tensor or its memory (a
// gradient also handed to another edge, one the caller gave as a root, a
// view of another tensor, anything saved for backward: each holds a second
// reference), it does not require grad, and it has the input's shape, dtype
// and device. These counts are the same at every run of the same
// program, so a recorded step graph takes the same decisions as the eager
// steps it replays.
bool writable_partial(const Tensor& partial, const OutputMeta& meta) {
  return partial.impl().use_count() == 1 && partial.storage().use_count() == 1 && !partial.requires_grad() &&
         partial.shape() == meta.shape && partial.dtype() == meta.dtype && partial.device() == meta.device;
}

// A tensor used by several ops gets a gradient from each; the engine sums them
// in the tensor's buffer slot as they arrive. Where the node about to run
// would produce the next one with a kernel that can add into its output (a
// convolution's backward-data and a GEMM compute out = result + beta * out
// for one extra read), the sum so far is moved out of the slot and handed to
// the node, which returns it with its own gradient added: the separate add,
// which reads both and writes a third tensor, disappears. Anything else
// keeps the plain path. Returns whether anything was handed over.
bool hand_over_partial_sums(Node& n, Buffers& buffers) {
  if (!fused_grad_accumulation_enabled()) return false;
  bool any = false;
  for (size_t i = 0; i < n.next_edges.size(); ++i) {
    const Edge& e = n.next_edges[i];
    if (!e.valid()) continue;
    auto it = buffers.find(e.fn.get());
    if (it == buffers.end() || e.input_nr >= it->second.size() || e.input_nr >= e.fn->outputs.size()) continue;
    Tensor& partial = it->second[e.input_nr];
    if (!partial.defined() || !writable_partial(partial, e.fn->outputs[e.input_nr]) ||
        !n.can_accumulate_input_grad(i, partial))
      continue;
    if (n.accumulate_into.empty()) n.accumulate_into.resize(n.next_edges.size());
    n.accumulate_into[i] = std::move(partial);  // the slot is empty until the node's result arrives
    any = true;
  }
  return any;
}

std::atomic<uint64_t> g_destinations_written{0};

using Dependencies = std::unordered_map<Node*, int>;

// Whether no gradient but the one from the node about to run will reach
// `next`: nothing is waiting in its buffer and that node's edge is the last
// one pointing at it (so it has no other producer, now or later).
bool sole_gradient(Node* next, const Buffers& buffers, const Dependencies& dependencies) {
  auto d = dependencies.find(next);
  if (d == dependencies.end() || d->second != 1) return false;
  auto b = buffers.find(next);
  if (b == buffers.end()) return true;
  for (const Tensor& t : b->second)
    if (t.defined()) return false;
  return true;
}

// A parameter autocast casts (a float32 weight read as bfloat16) gets its
// gradient from the op that read the cast, through the cast's backward, which
// hands it on uncast to the leaf's AccumulateGrad, which widens it into .grad:
// a copy kernel per parameter per step. Where that op's formula can write the
// gradient in .grad's dtype itself (a GEMM with a float32 output,
// Node::can_write_input_grad_into) and the leaf offers a destination
// (Node::gradient_destination: .grad, or memory that becomes it), the engine
// hands that destination to the formula, and the gradient travels on to the
// leaf already written. Only where the gradient is the only one each node on
// the way gets, so no other contribution is missed: a parameter read by
// several ops, or a cast read twice, keeps the plain path. Returns whether
// anything was handed over.
bool offer_gradient_destinations(Node& n, const Buffers& buffers, const Dependencies& dependencies) {
  bool any = false;
  for (size_t i = 0; i < n.next_edges.size(); ++i) {
    const Edge& e = n.next_edges[i];
    if (!e.valid() || (!n.accumulate_into.empty() && n.accumulate_into[i].defined())) continue;
    Node* cast = e.fn.get();
    if (!cast->forwards_gradient() || cast->outputs.size() != 1 || cast->next_edges.size() != 1 ||
        !cast->next_edges[0].valid() || !sole_gradient(cast, buffers, dependencies))
      continue;
    Node* leaf = cast->next_edges[0].fn.get();
    if (!leaf->casts_incoming_gradients() || !sole_gradient(leaf, buffers, dependencies)) continue;
    GradDestination d = leaf->gradient_destination(cast->next_edges[0].input_nr);
    if (!d.defined() || !n.can_write_input_grad_into(i, d.tensor)) continue;
    if (n.destinations.empty()) n.destinations.resize(n.next_edges.size());
    n.destinations[i] = std::move(d);
    any = true;
  }
  return any;
}

}  // namespace

bool fused_grad_accumulation_enabled() { return fused_accumulation_flag().load(std::memory_order_relaxed); }
void set_fused_grad_accumulation_enabled(bool on) { fused_accumulation_flag().store(on, std::memory_order_relaxed); }
uint64_t fused_grad_accumulation_count() { return g_fused_accumulations.load(std::memory_order_relaxed); }
uint64_t gradient_destinations_written() { return g_destinations_written.load(std::memory_order_relaxed); }

void run_backward(const std::vector<Tensor>& roots, const std::vector<Tensor>& grad_roots, bool retain_graph) {
  NoGradGuard no_grad;  // backward formulas are not themselves recorded
  // Formulas compute in the dtypes their forward chose, and the parameter casts
  // autocast cached are about to lose their graph: the next forward recasts.
  AutocastSuspend no_autocast;
  drop_recorded_autocast_casts();
  // Count, for every node reachable from the roots, how many edges point at it.
  Dependencies dependencies;
  std::unordered_map<Node*, std::shared_ptr<Node>> keep_alive;
  std::vector<Node*> stack;
  std::vector<Edge> root_edges;
  for (const Tensor& r : roots) {
    Edge e = gradient_edge(r);
    HEARTH_CHECK(e.valid(), AutogradError,
                 "[autograd] element 0 of tensors does not require grad and does not have a grad_fn: call "
                 "requires_grad_() on the inputs, and make sure the computation was not under NoGradGuard");
    root_edges.push_back(e);
    if (keep_alive.emplace(e.fn.get(), e.fn).second) stack.push_back(e.fn.get());
  }
  while (!stack.empty()) {
    Node* n = stack.back();
    stack.pop_back();
    for (const Edge& e : n->next_edges) {
      if (!e.valid()) continue;
      dependencies[e.fn.get()] += 1;
      if (keep_alive.emplace(e.fn.get(), e.fn).second) stack.push_back(e.fn.get());
    }
  }

  Buffers buffers;
  auto buffer_of = [&](Node* n) -> std::vector<Tensor>& {
    auto& b = buffers[n];
    if (b.empty()) b.resize(std::max<size_t>(n->outputs.size(), 1));
    return b;
  };
  // Destinations written (offer_gradient_destinations), on their way through
  // a forwarding cast to their leaf: they pass in the leaf's dtype, not cast
  // to the cast's output dtype as any other gradient is.
  std::unordered_set<const TensorImpl*> written;
  std::priority_queue<Node*, std::vector<Node*>, ByLatest> ready;
  std::unordered_set<Node*> queued;
  for (size_t i = 0; i < root_edges.size(); ++i) {
    Node* n = root_edges[i].fn.get();
    accumulate(buffer_of(n), *n, root_edges[i].input_nr, grad_roots[i]);
    if (dependencies[n] == 0 && queued.insert(n).second) ready.push(n);
  }

  while (!ready.empty()) {
    Node* n = ready.top();
    ready.pop();
    std::vector<Tensor> grads = std::move(buffer_of(n));
    buffers.erase(n);
    for (size_t i = 0; i < grads.size() && i < n->outputs.size(); ++i) {
      if (!grads[i].defined()) {
        const OutputMeta& m = n->outputs[i];
        grads[i] = zeros(m.shape, m.dtype, m.device);
      } else if (!written.empty() && written.erase(grads[i].impl().get()) > 0) {
        // A destination written: it stays in its leaf's dtype.
      } else if (grads[i].dtype() != n->outputs[i].dtype && is_floating(n->outputs[i].dtype) &&
                 !n->casts_incoming_gradients()) {
        grads[i] = cast(grads[i], n->outputs[i].dtype);  // mixed precision: gradients keep their output's dtype
      }
    }
    // Partial sums handed to the node (hand_over_partial_sums); it keeps none
    // past this iteration, even when its formula throws.
    struct ClearHanded {
      Node* node;
      ~ClearHanded() {
        if (!node->accumulate_into.empty()) node->accumulate_into.clear();
        if (!node->destinations.empty()) node->destinations.clear();
      }
    } clear_handed{n};
    std::vector<bool> handed;
    if (hand_over_partial_sums(*n, buffers))
      for (const Tensor& t : n->accumulate_into) handed.push_back(t.defined());
    // Destinations offered, by identity: the gradient returned must be the tensor itself.
    std::vector<std::shared_ptr<TensorImpl>> offered;
    if (offer_gradient_destinations(*n, buffers, dependencies))
      for (const GradDestination& d : n->destinations) offered.push_back(d.defined() ? d.tensor.impl() : nullptr);
    std::vector<Tensor> input_grads;
    if (anomaly_detection_enabled()) {
      // Ops inside the formula are checked by dispatch (naming this node);
      // what the formula returns is checked here.
      AnomalyBackwardScope scope(n->name());
      input_grads = n->apply(std::move(grads));
      check_gradients_finite(n->name(), input_grads);
    } else {
      input_grads = n->apply(std::move(grads));
    }
    for (size_t i = 0; i < handed.size(); ++i) {
      if (!handed[i]) continue;
      const Edge& e = n->next_edges[i];
      if (Tensor& left = n->accumulate_into[i]; left.defined()) {
        // Not taken: back into its slot, so the sum is the plain path's add(partial, g).
        accumulate(buffer_of(e.fn.get()), *e.fn, e.input_nr, std::move(left));
      } else {
        HEARTH_CHECK(i < input_grads.size() && input_grads[i].defined(), AutogradError, "[autograd] ", n->name(),
                     " took the partial gradient sum of input ", i, " but returned no gradient for it");
        g_fused_accumulations.fetch_add(1, std::memory_order_relaxed);
      }
    }
    for (size_t i = 0; i < offered.size(); ++i) {
      // One not taken is dropped: the leaf then finds a gradient of its own.
      if (!offered[i] || n->destinations[i].defined()) continue;
      HEARTH_CHECK(i < input_grads.size() && input_grads[i].impl() == offered[i], AutogradError, "[autograd] ",
                   n->name(), " took the destination of input ", i, "'s gradient but returned another tensor");
      written.insert(offered[i].get());
      g_destinations_written.fetch_add(1, std::memory_order_relaxed);
    }
    offered.clear();  // the leaf must see no other holder of .grad
    if (!retain_graph) n->release_saved();
    for (size_t i = 0; i < n->next_edges.size() && i < input_grads.size(); ++i) {
      const Edge& e = n->next_edges[i];
      if (!e.valid()) continue;
      Node* next = e.fn.get();
      check_input_grad(*n, i, input_grads[i], *next, e.input_nr);
      accumulate(buffer_of(next), *next, e.input_nr, std::move(input_grads[i]));
      if (--dependencies[next] == 0 && queued.insert(next).second) ready.push(next);
    }
  }
}

}  // namespace hearth::autograd
