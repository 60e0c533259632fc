#include "hearth/dispatch/anomaly_check.h"

#include <atomic>
#include <cmath>
#include <sstream>

#include "hearth/core/errors.h"
#include "hearth/dispatch/dispatch.h"

namespace hearth {
namespace {

std::atomic<bool> g_enabled{false};
// The backward node being applied on this thread, if any.
thread_local const std::string* t_backward_node = nullptr;
// Set while a check copies a tensor to the host: that copy is itself an op,
// which must not be checked (or the check would recurse).
thread_local bool t_checking = false;

struct Finding {
  int64_t index = -1;  // the first non-finite element, -1 when all are finite
  int64_t nans = 0;
  int64_t infs = 0;
};

template <typename T>
Finding scan(const T* p, int64_t n) {
  Finding f;
  for (int64_t i = 0; i < n; ++i) {
    const float v = static_cast<float>(p[i]);
    if (std::isfinite(v)) continue;
    if (f.index < 0) f.index = i;
    (std::isnan(v) ? f.nans : f.infs) += 1;
  }
  return f;
}

Finding scan_f64(const double* p, int64_t n) {
  Finding f;
  for (int64_t i = 0; i < n; ++i) {
    if (std::isfinite(p[i])) continue;
    if (f.index < 0) f.index = i;
    (std::isnan(p[i]) ? f.nans : f.infs) += 1;
  }
  return f;
}

Finding find_non_finite(const Tensor& t) {
  if (!t.defined() || !is_floating(t.dtype()) || t.numel() == 0) return {};
  t_checking = true;
  Tensor host;
  try {
    host = transfer(t, Device());  // itself when already a dense CPU tensor
  } catch (...) {
    t_checking = false;
    throw;
  }
  t_checking = false;
  const int64_t n = host.numel();
  switch (host.dtype()) {
    case DType::float32:
      return scan(host.data<float>(), n);
    case DType::float64:
      return scan_f64(host.data<double>(), n);
    case DType::bfloat16:
      return scan(host.data<BFloat16>(), n);
    case DType::float16:
      return scan(host.data<Half>(), n);
    default:
      return {};
  }
}

std::string describe(const Tensor& t) {
  if (!t.defined()) return "(none)";
  return t.shape_string() + " " + dtype_name(t.dtype()) + " on " + t.device().str();
}

std::string list(const std::vector<Tensor>& ts) {
  std::string s;
  for (size_t i = 0; i < ts.size(); ++i) s += (i ? ", " : "") + describe(ts[i]);
  return s.empty() ? "none" : s;
}

std::string where_running() {
  if (t_backward_node == nullptr) return "in the forward pass";
  return "in the backward pass, inside " + *t_backward_node +
         " (the gradient formula recorded by the forward op of that name)";
}

[[noreturn]] void report(const std::string& producer, const std::string& what, const Finding& f,
                         const std::vector<Tensor>& inputs, const std::vector<Tensor>& outputs) {
  std::ostringstream os;
  os << "[detect_anomaly] " << producer << " " << where_running() << " produced " << what << " with " << f.nans
     << " NaN and " << f.infs << " infinite values (the first at flat index " << f.index
     << "); inputs: " << list(inputs) << "; outputs: " << list(outputs) << ".";
  // Say whether the values came in already broken (data, parameters) or were
  // made here (a log of 0, a division by 0, an overflow).
  for (size_t i = 0; i < inputs.size(); ++i) {
    if (find_non_finite(inputs[i]).index >= 0) {
      os << " Input " << i << " already held non-finite values (from outside any checked op: the data or a "
         << "parameter set directly).";
      break;
    }
  }
  HEARTH_THROW(NonFiniteError, os.str());
}

}  // namespace

bool anomaly_detection_enabled() { return g_enabled.load(std::memory_order_relaxed); }
void set_anomaly_detection_enabled(bool enabled) { g_enabled.store(enabled, std::memory_order_relaxed); }

AnomalyBackwardScope::AnomalyBackwardScope(const std::string& node) : prev_(t_backward_node) {
  t_backward_node = &node;
}
AnomalyBackwardScope::~AnomalyBackwardScope() { t_backward_node = prev_; }

void check_op_outputs_finite(OpHandle op, const OpCall& call) {
  if (t_checking) return;
  for (size_t i = 0; i < call.outputs.size(); ++i) {
    Finding f = find_non_finite(call.outputs[i]);
    if (f.index >= 0) report("op '" + op->def.name + "'", "output " + std::to_string(i), f, call.inputs, call.outputs);
  }
  // In-place updates (optimizer steps, running statistics) write their inputs.
  const int n = static_cast<int>(call.inputs.size());
  const int stride = op->def.mutated_stride > 0 ? op->def.mutated_stride : n + 1;
  for (int base = 0; base < n; base += stride) {
    for (int idx : op->def.mutated_inputs) {
      const int i = base + idx;
      if (i >= n) continue;
      Finding f = find_non_finite(call.inputs[i]);
      if (f.index >= 0)
        report("op '" + op->def.name + "'", "input " + std::to_string(i) + " (written in place)", f, call.inputs,
               call.outputs);
    }
  }
}

void check_gradients_finite(const std::string& node, const std::vector<Tensor>& grads) {
  for (size_t i = 0; i < grads.size(); ++i) {
    Finding f = find_non_finite(grads[i]);
    if (f.index >= 0) {
      AnomalyBackwardScope scope(node);
      report(node, "the gradient for its input " + std::to_string(i), f, {}, grads);
    }
  }
}

}  // namespace hearth
