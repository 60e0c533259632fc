#include "hearth/autograd/engine.h"

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

void accumulate(std::vector<Tensor>& slot_buffer, size_t slot, Tensor g) {
  if (!g.defined()) return;
  Tensor& cur = slot_buffer[slot];
  cur = cur.defined() ? add(cur, g) : std::move(g);
}

}  // namespace

void run_backward(const std::vector<Tensor>& roots, const std::vector<Tensor>& grad_roots, bool retain_graph) {
  NoGradGuard no_grad;  // backward formulas are not themselves recorded
  // Formulas compute in the dtypes their forward chose, and the parameter casts
  // autocast cached are about to lose their graph: the next forward recasts.
  AutocastSuspend no_autocast;
  drop_recorded_autocast_casts();
  // Count, for every node reachable from the roots, how many edges point at it.
  std::unordered_map<Node*, int> dependencies;
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

  std::unordered_map<Node*, std::vector<Tensor>> buffers;
  auto buffer_of = [&](Node* n) -> std::vector<Tensor>& {
    auto& b = buffers[n];
    if (b.empty()) b.resize(std::max<size_t>(n->outputs.size(), 1));
    return b;
  };
  std::priority_queue<Node*, std::vector<Node*>, ByLatest> ready;
  std::unordered_set<Node*> queued;
  for (size_t i = 0; i < root_edges.size(); ++i) {
    Node* n = root_edges[i].fn.get();
    accumulate(buffer_of(n), root_edges[i].input_nr, grad_roots[i]);
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
      } else if (grads[i].dtype() != n->outputs[i].dtype && is_floating(n->outputs[i].dtype)) {
        grads[i] = cast(grads[i], n->outputs[i].dtype);  // mixed precision: gradients keep their output's dtype
      }
    }
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
    if (!retain_graph) n->release_saved();
    for (size_t i = 0; i < n->next_edges.size() && i < input_grads.size(); ++i) {
      const Edge& e = n->next_edges[i];
      if (!e.valid()) continue;
      Node* next = e.fn.get();
      check_input_grad(*n, i, input_grads[i], *next, e.input_nr);
      accumulate(buffer_of(next), e.input_nr, std::move(input_grads[i]));
      if (--dependencies[next] == 0 && queued.insert(next).second) ready.push(next);
    }
  }
}

}  // namespace hearth::autograd
