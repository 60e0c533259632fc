#include "hearth/autograd/node.h"

#include <atomic>

#include "hearth/autograd/accumulate_grad.h"
#include "hearth/core/errors.h"

namespace hearth::autograd {
namespace {
std::atomic<uint64_t> g_next_sequence_nr{0};
}

Node::Node(std::string name) : name_(std::move(name)), sequence_nr_(g_next_sequence_nr++) {}

bool Node::can_accumulate_input_grad(size_t, const Tensor&) const { return false; }
GradDestination Node::gradient_destination(size_t) { return {}; }
bool Node::can_write_input_grad_into(size_t, const Tensor&) const { return false; }

SavedTensor::SavedTensor(const Tensor& t) {
  if (!t.defined()) return;
  auto impl = std::make_shared<TensorImpl>(*t.impl());
  impl->autograd = nullptr;
  data_ = Tensor(std::move(impl));
  version_ = t.version();
}

Tensor SavedTensor::unpack(const std::string& node) const {
  if (!data_.defined()) return data_;
  HEARTH_CHECK(data_.version() == version_, AutogradError,
               "[autograd] one of the tensors needed for gradient computation has been modified by an in-place "
               "operation: a tensor of shape ",
               data_.shape_string(), " saved by ", node, " is at version ", data_.version(), "; expected version ",
               version_, ". Use an out-of-place op, or clone() the tensor before modifying it.");
  return data_;
}

Edge gradient_edge(const Tensor& t) {
  if (!t.defined()) return {};
  AutogradMeta* m = t.autograd_meta();
  if (!m || !m->requires_grad) return {};
  if (m->grad_fn) return Edge{m->grad_fn, m->output_nr};
  std::shared_ptr<Node> acc = m->grad_accumulator.lock();
  if (!acc) {
    acc = std::make_shared<AccumulateGrad>(t);
    m->grad_accumulator = acc;
  }
  return Edge{acc, 0};
}

}  // namespace hearth::autograd
