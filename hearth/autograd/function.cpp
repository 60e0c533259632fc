#include "hearth/autograd/function.h"

#include "hearth/autograd/grad_mode.h"
#include "hearth/core/errors.h"
#include "hearth/ops/reduction.h"

namespace hearth::autograd {
namespace {

// A node whose backward is a closure. The closure owns the saved tensors, so
// releasing the graph is dropping the closure.
class LambdaNode final : public Node {
 public:
  LambdaNode(std::string name, BackwardFn fn, std::vector<AccumulatingInput> accumulating,
             std::vector<WritingInput> writing)
      : Node(std::move(name)), fn_(std::move(fn)), accumulating_(std::move(accumulating)), writing_(std::move(writing)) {}

  bool can_accumulate_input_grad(size_t input, const Tensor& partial) const override {
    if (fn_ == nullptr) return false;  // released: apply() is about to say so
    for (const AccumulatingInput& a : accumulating_)
      if (a.input == input) return partial.dtype() == a.dtype && partial.is_contiguous(a.format);
    return false;
  }

  bool can_write_input_grad_into(size_t input, const Tensor& destination) const override {
    if (fn_ == nullptr) return false;
    for (const WritingInput& w : writing_)
      if (w.input == input) return destination.dtype() == w.dtype && destination.is_contiguous(w.format);
    return false;
  }

  std::vector<Tensor> apply(std::vector<Tensor>&& grads) override {
    if (fn_ == nullptr) throw_released(name());
    BackwardContext ctx(name(), grads, next_edges, &accumulate_into, &destinations);
    std::vector<Tensor> out = fn_(ctx);
    HEARTH_CHECK(out.size() == next_edges.size(), AutogradError, "[autograd] ", name(), " returned ", out.size(),
                 " gradients for ", next_edges.size(), " inputs");
    return out;
  }
  void release_saved() override { fn_ = nullptr; }

 private:
  BackwardFn fn_;
  std::vector<AccumulatingInput> accumulating_;
  std::vector<WritingInput> writing_;
};

}  // namespace

bool any_requires_grad(const std::vector<Tensor>& inputs) {
  if (!grad_enabled()) return false;
  for (const Tensor& t : inputs)
    if (t.defined() && t.requires_grad()) return true;
  return false;
}

bool any_requires_grad(std::initializer_list<Tensor> inputs) {
  if (!grad_enabled()) return false;
  for (const Tensor& t : inputs)
    if (t.defined() && t.requires_grad()) return true;
  return false;
}

void throw_released(const std::string& name) {
  HEARTH_THROW(AutogradError, "[autograd] trying to backward through the graph a second time (", name,
               "): its saved tensors were freed after the first backward. Pass retain_graph=true to the "
               "first backward() if you need to call it twice.");
}

void record(const std::string& name, const std::vector<Tensor>& inputs, const std::vector<Tensor>& outputs,
            BackwardFn fn, std::vector<AccumulatingInput> accumulating, std::vector<WritingInput> writing) {
  if (!any_requires_grad(inputs)) return;
  record_node(std::make_shared<LambdaNode>(name, std::move(fn), std::move(accumulating), std::move(writing)), inputs,
              outputs);
}

void record_node(const std::shared_ptr<Node>& node, const std::vector<Tensor>& inputs,
                 const std::vector<Tensor>& outputs) {
  if (!any_requires_grad(inputs)) return;
  node->next_edges.reserve(inputs.size());
  for (const Tensor& t : inputs) node->next_edges.push_back(gradient_edge(t));
  for (size_t i = 0; i < outputs.size(); ++i) {
    const Tensor& o = outputs[i];
    node->outputs.push_back(OutputMeta{o.shape(), o.dtype(), o.device()});
    // Integer outputs (argmax, indices) carry no gradient.
    if (!is_floating(o.dtype())) continue;
    AutogradMeta& m = o.ensure_autograd_meta();
    m.requires_grad = true;
    m.grad_fn = node;
    m.output_nr = static_cast<uint32_t>(i);
  }
}

Tensor sum_to_shape(const Tensor& grad, const Shape& shape) {
  if (grad.shape() == shape) return grad;
  int64_t lead = grad.dim() - static_cast<int64_t>(shape.size());
  HEARTH_CHECK(lead >= 0, ShapeError, "[autograd] cannot sum gradient of shape ", grad.shape_string(), " to ",
               shape_str(shape));
  std::vector<int64_t> dims;
  for (int64_t i = 0; i < grad.dim(); ++i) {
    if (i < lead) dims.push_back(i);
    else if (shape[i - lead] == 1 && grad.shape()[i] != 1) dims.push_back(i);
  }
  Tensor r = dims.empty() ? grad : sum(grad, dims, /*keepdim=*/true);
  return r.shape() == shape ? r : r.reshape(shape);
}

}  // namespace hearth::autograd
