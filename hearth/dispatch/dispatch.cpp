#include "hearth/dispatch/dispatch.h"

#include <atomic>
#include <chrono>
#include <cstdlib>
#include <iomanip>
#include <iostream>
#include <mutex>
#include <set>
#include <sstream>

#include "hearth/core/device_runtime.h"
#include "hearth/core/switch_list.h"
#include "hearth/dispatch/anomaly_check.h"
#include "hearth/dispatch/dispatch_trace.h"
#include "hearth/dispatch/op_profiler.h"

namespace hearth {
namespace {

struct FallbackState {
  std::mutex mu;
  std::map<std::string, FallbackStats> stats;
  std::set<std::string> warned;
  std::map<std::string, int64_t> composed;
};

FallbackState& fallback_state() {
  static FallbackState s;
  return s;
}

// The dispatch trace (dispatch_trace.h): one relaxed load per call while off.
std::atomic<bool> trace_on{false};
std::mutex trace_mu;
std::set<std::string>& trace_names() {
  static std::set<std::string> names;
  return names;
}

void trace(OpHandle op) {
  std::lock_guard<std::mutex> lock(trace_mu);
  trace_names().insert(op->def.name);
}

DType key_dtype(const OpCall& call) {
  for (const Tensor& t : call.inputs)
    if (t.defined()) return t.dtype();
  for (const Tensor& t : call.outputs)
    if (t.defined()) return t.dtype();
  return DType::float32;
}

Device call_device(OpHandle op, const OpCall& call) {
  std::vector<Tensor> all = call.inputs;
  all.insert(all.end(), call.outputs.begin(), call.outputs.end());
  return common_device(op->def.name.c_str(), all);
}

std::string supported_dtypes(const KernelEntry& k) {
  std::string s;
  for (int i = 0; i < kNumDTypes; ++i) {
    DType t = static_cast<DType>(i);
    if (k.dtypes.contains(t)) s += std::string(s.empty() ? "" : ", ") + dtype_name(t);
  }
  return s;
}

void run_on_cpu_fallback(OpHandle op, OpCall& call, Device device) {
  const std::string& name = op->def.name;
  FallbackStats delta;
  OpCall cpu_call;
  cpu_call.attrs_ptr = call.attrs_ptr;
  cpu_call.attrs_type = call.attrs_type;
  // 1. Inputs to the CPU, all copies issued before the one synchronisation.
  for (const Tensor& t : call.inputs) {
    if (!t.defined()) {
      cpu_call.inputs.emplace_back();
      continue;
    }
    cpu_call.inputs.push_back(transfer(t, Device()));
    delta.bytes_to_cpu += static_cast<int64_t>(t.nbytes());
  }
  device_runtime(device.kind).synchronize(device.index);
  for (const Tensor& t : call.outputs)
    cpu_call.outputs.push_back(t.defined() ? Tensor::empty(t.shape(), t.dtype(), Device()) : Tensor());
  // 2. Run the CPU kernel.
  const KernelEntry& k = op->kernels[kCpu.id];
  k.fn(cpu_call);
  // 3. Inputs the op mutates go back; 4. outputs go back.
  const int n_inputs = static_cast<int>(call.inputs.size());
  const int stride = op->def.mutated_stride > 0 ? op->def.mutated_stride : n_inputs + 1;
  for (int base = 0; base < n_inputs; base += stride) {
    for (int idx : op->def.mutated_inputs) {
      const int i = base + idx;
      if (i < n_inputs && call.inputs[i].defined()) {
        copy_into(call.inputs[i], cpu_call.inputs[i]);
        delta.bytes_from_cpu += static_cast<int64_t>(call.inputs[i].nbytes());
      }
    }
  }
  for (size_t i = 0; i < call.outputs.size(); ++i) {
    if (!call.outputs[i].defined()) continue;
    copy_into(call.outputs[i], cpu_call.outputs[i]);
    delta.bytes_from_cpu += static_cast<int64_t>(call.outputs[i].nbytes());
  }

  auto& st = fallback_state();
  std::lock_guard<std::mutex> lock(st.mu);
  FallbackStats& s = st.stats[name];
  s.calls += 1;
  s.bytes_to_cpu += delta.bytes_to_cpu;
  s.bytes_from_cpu += delta.bytes_from_cpu;
  if (st.warned.insert(name).second) {
    std::cerr << "[hearth] warning: [" << name << "] is not implemented for " << device_kind_name(device.kind)
              << "; running it on the CPU because HEARTH_ENABLE_CPU_FALLBACK=1. This copies its tensors between "
              << "devices on every call; hearth::fallback_report() shows the cost.\n";
  }
}

// A fusion the device has no kernel for, computed by its composition of
// primitives on the same device.
void run_composition(OpHandle op, OpCall& call) {
  op->composition(call);
  auto& st = fallback_state();
  std::lock_guard<std::mutex> lock(st.mu);
  st.composed[op->def.name] += 1;
}

// Picks the kernel (or the composition, or the CPU fallback) and runs it.
void run_kernel(OpHandle op, OpCall& call);

}  // namespace

bool cpu_fallback_enabled() { return switches::enable_cpu_fallback().get(); }

Device common_device(const char* op, const std::vector<Tensor>& tensors) {
  const Tensor* first = nullptr;
  for (size_t i = 0; i < tensors.size(); ++i) {
    const Tensor& t = tensors[i];
    if (!t.defined()) continue;
    if (!first) {
      first = &t;
      continue;
    }
    HEARTH_CHECK(t.device() == first->device(), DeviceError, "[", op, "] expected all tensors on ",
                 first->device().str(), ", but argument ", i + 1, " is on ", t.device().str());
  }
  return first ? first->device() : Device();
}

void dispatch(OpHandle op, OpCall& call) {
  run_kernel(op, call);
  // Anomaly detection: every op, forward or backward, passes here once.
  if (anomaly_detection_enabled()) check_op_outputs_finite(op, call);
}

namespace {

void run_kernel(OpHandle op, OpCall& call) {
  Device device = call_device(op, call);
  DType dtype = key_dtype(call);
  const KernelEntry& k = op->kernels[device.kind.id];
  static const bool log = switches::log_dispatch().get();
  if (k.fn && k.dtypes.contains(dtype)) {
    if (trace_on.load(std::memory_order_relaxed)) trace(op);
    if (log) std::cerr << "[dispatch] " << op->def.name << " on " << device.str() << " (" << dtype_name(dtype) << ")\n";
    if (op_profiling_enabled()) {
      DeviceRuntime& rt = device_runtime(device.kind);
      if (op_profile_mode() == OpProfileMode::events) {
        auto start = rt.record_timing_event(device.index);
        const auto t0 = std::chrono::steady_clock::now();
        k.fn(call);
        auto end = rt.record_timing_event(device.index);
        if (start && end)
          record_op_events(op->def.name, call, device, std::move(start), std::move(end));
        else  // a device without events (the CPU) ran the op before returning
          record_op_time(op->def.name, call, device,
                         std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
        return;
      }
      const bool sync = op_profile_mode() == OpProfileMode::device;
      if (sync) rt.synchronize(device.index);
      const auto t0 = std::chrono::steady_clock::now();
      k.fn(call);
      if (sync) rt.synchronize(device.index);
      record_op_time(op->def.name, call, device,
                     std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
      return;
    }
    k.fn(call);
    return;
  }
  if (op->composition) {
    if (log)
      std::cerr << "[dispatch] " << op->def.name << " on " << device.str() << " (" << dtype_name(dtype)
                << ", composed of primitives)\n";
    run_composition(op, call);
    return;
  }
  const KernelEntry& cpu = op->kernels[kCpu.id];
  bool cpu_can = cpu.fn && cpu.dtypes.contains(dtype);
  if (device.is_cpu() || !cpu_can || op == find_op(OpId::copy_)) {
    std::string why =
        k.fn ? "for dtype " + std::string(dtype_name(dtype)) + " (supported: " + supported_dtypes(k) + ")" : "";
    HEARTH_THROW(NotImplementedError, "[", op->def.name, "] is not implemented for ", device_kind_name(device.kind),
                 why.empty() ? "" : " ", why, ".");
  }
  if (!cpu_fallback_enabled()) {
    std::string why = k.fn ? " for dtype " + std::string(dtype_name(dtype)) : "";
    HEARTH_THROW(NotImplementedError, "[", op->def.name, "] is not implemented for ", device_kind_name(device.kind),
                 why,
                 ". Set HEARTH_ENABLE_CPU_FALLBACK=1 to run it on the CPU (slower), or move the tensors to the CPU.");
  }
  if (log) std::cerr << "[dispatch] " << op->def.name << " on cpu (fallback from " << device.str() << ")\n";
  run_on_cpu_fallback(op, call, device);
}

}  // namespace

Tensor transfer(const Tensor& src, Device device) {
  Device from = src.device();
  Tensor s = src;
  if (!s.is_contiguous()) {  // make it dense on its own device first
    Tensor dense = Tensor::empty(s.shape(), s.dtype(), from);
    copy_into(dense, s);
    s = dense;
  }
  if (from == device) return s;
  Tensor out = Tensor::empty(s.shape(), s.dtype(), device);
  size_t n = s.nbytes();
  if (n == 0) return out;
  if (from.is_cpu()) {
    device_runtime(device.kind).copy_from_host(out.data_ptr(), s.data_ptr(), n, device.index);
  } else if (device.is_cpu()) {
    device_runtime(from.kind).copy_to_host(out.data_ptr(), s.data_ptr(), n, from.index);
  } else {  // between accelerators: stage through the host
    Tensor host = transfer(s, Device());
    device_runtime(device.kind).copy_from_host(out.data_ptr(), host.data_ptr(), n, device.index);
  }
  return out;
}

void copy_into(const Tensor& dst, const Tensor& src) {
  HEARTH_CHECK(dst.shape() == src.shape(), ShapeError, "[copy_] destination shape ", dst.shape_string(),
               " differs from source shape ", src.shape_string());
  static OpHandle copy_op = find_op(OpId::copy_);
  OpCall call;
  call.inputs = {src.device() == dst.device() ? src : transfer(src, dst.device())};
  call.outputs = {dst};
  dispatch(copy_op, call);
}

std::map<std::string, FallbackStats> fallback_stats() {
  auto& st = fallback_state();
  std::lock_guard<std::mutex> lock(st.mu);
  return st.stats;
}

void reset_fallback_stats() {
  auto& st = fallback_state();
  std::lock_guard<std::mutex> lock(st.mu);
  st.stats.clear();
  st.warned.clear();
}

void set_dispatch_trace(bool on) {
  std::lock_guard<std::mutex> lock(trace_mu);
  if (on) trace_names().clear();
  trace_on.store(on, std::memory_order_relaxed);
}

std::set<std::string> traced_ops() {
  std::lock_guard<std::mutex> lock(trace_mu);
  return trace_names();
}

std::map<std::string, int64_t> composed_calls() {
  auto& st = fallback_state();
  std::lock_guard<std::mutex> lock(st.mu);
  return st.composed;
}

void reset_composed_calls() {
  auto& st = fallback_state();
  std::lock_guard<std::mutex> lock(st.mu);
  st.composed.clear();
}

std::string composed_report() {
  auto counts = composed_calls();
  if (counts.empty()) return {};
  std::ostringstream os;
  os << "Composed of primitives (fusions the device has no kernel for):\n";
  os << std::left << std::setw(32) << "op" << std::right << std::setw(10) << "calls"
     << "\n";
  for (auto& [name, calls] : counts)
    os << std::left << std::setw(32) << name << std::right << std::setw(10) << calls << "\n";
  return os.str();
}

std::string fallback_report() {
  auto stats = fallback_stats();
  if (stats.empty()) return {};
  std::ostringstream os;
  os << "CPU fallback (ops the device could not run):\n";
  os << std::left << std::setw(24) << "op" << std::right << std::setw(10) << "calls" << std::setw(16) << "MB to cpu"
     << std::setw(16) << "MB from cpu"
     << "\n";
  for (auto& [name, s] : stats) {
    os << std::left << std::setw(24) << name << std::right << std::setw(10) << s.calls << std::setw(16) << std::fixed
       << std::setprecision(3) << s.bytes_to_cpu / 1e6 << std::setw(16) << s.bytes_from_cpu / 1e6 << "\n";
  }
  return os.str();
}

}  // namespace hearth
