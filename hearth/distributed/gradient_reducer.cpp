#include "hearth/distributed/gradient_reducer.h"

#include "hearth/autograd/grad_mode.h"
#include "hearth/autograd/node.h"
#include "hearth/core/device_runtime.h"
#include "hearth/distributed/flat_buffer.h"
#include "hearth/ops/factory.h"
#include "hearth/ops/view.h"

namespace hearth::distributed {

struct GradientReducer::State {
  // With measure_exposed_communication(true): device timing events at the end
  // of backward and after every bucket's wait, per sync step, until
  // exposed_communication_ms() reads them. Off, a step makes no events.
  bool measure_exposed = false;
  std::vector<std::pair<std::shared_ptr<DeviceRuntime::TimingEvent>, std::shared_ptr<DeviceRuntime::TimingEvent>>>
      exposed;
  struct Bucket {
    std::vector<size_t> params;
    size_t pending = 0;
    bool launched = false;
    Tensor flat;
    WorkPtr work;
  };

  ProcessGroupPtr group;
  std::vector<Tensor> params;
  std::vector<size_t> bucket_of;
  std::vector<bool> seen;
  std::vector<Bucket> buckets;
  size_t next_to_launch = 0;
  bool armed = false;
  size_t launched_early = 0;

  void reset_counts() {
    std::fill(seen.begin(), seen.end(), false);
    for (Bucket& b : buckets) {
      b.pending = b.params.size();
      b.launched = false;
      b.flat = Tensor();
      b.work.reset();
    }
    next_to_launch = 0;
  }

  void launch(Bucket& b) {
    NoGradGuard no_grad;
    std::vector<Tensor> grads;
    grads.reserve(b.params.size());
    for (size_t i : b.params) {
      const Tensor& p = params[i];
      Tensor g = p.grad();
      if (!g.defined()) g = zeros(p.shape(), p.dtype(), p.device());
      // The bucket holds each gradient in its parameter's memory order, which
      // finish() reads back as the parameter's layout.
      const MemoryFormat fmt = p.suggest_memory_format();
      grads.push_back(g.is_contiguous(fmt) ? g : contiguous(g, fmt));
    }
    b.flat = flatten_in_memory_order(grads);
    b.work = group->all_reduce({b.flat}, ReduceOp::avg);
    b.launched = true;
  }

  void launch_ready() {
    while (next_to_launch < buckets.size() && buckets[next_to_launch].pending == 0) {
      launch(buckets[next_to_launch++]);
      ++launched_early;
    }
  }

  void on_gradient(size_t index) {
    if (!armed || seen[index]) return;
    seen[index] = true;
    Bucket& b = buckets[bucket_of[index]];
    if (--b.pending == 0) launch_ready();
  }
};

GradientReducer::GradientReducer(ProcessGroupPtr group, std::vector<Tensor> params, size_t bucket_bytes)
    : state_(std::make_shared<State>()) {
  HEARTH_CHECK(group != nullptr, ValueError, "[ddp] GradientReducer needs a process group");
  State& s = *state_;
  s.group = std::move(group);
  s.params = std::move(params);
  s.bucket_of.resize(s.params.size());
  s.seen.resize(s.params.size());
  // Reverse order; a bucket holds one dtype and device, and closes once it
  // reaches bucket_bytes.
  size_t bytes = 0;
  for (size_t k = s.params.size(); k-- > 0;) {
    const Tensor& p = s.params[k];
    HEARTH_CHECK(p.requires_grad(), ValueError, "[ddp] parameter ", k, " does not require grad");
    bool fresh = s.buckets.empty() || bytes >= bucket_bytes;
    if (!fresh) {
      const Tensor& first = s.params[s.buckets.back().params.front()];
      fresh = first.dtype() != p.dtype() || first.device() != p.device();
    }
    if (fresh) {
      s.buckets.emplace_back();
      bytes = 0;
    }
    s.buckets.back().params.push_back(k);
    s.bucket_of[k] = s.buckets.size() - 1;
    bytes += p.nbytes();
  }
  s.reset_counts();
  std::weak_ptr<State> weak = state_;
  for (size_t k = 0; k < s.params.size(); ++k) {
    s.params[k].ensure_autograd_meta().post_accumulate_hooks.push_back([weak, k](const Tensor&) {
      if (auto state = weak.lock()) state->on_gradient(k);
    });
  }
}

GradientReducer::~GradientReducer() = default;

void GradientReducer::prepare_for_backward(bool sync) {
  State& s = *state_;
  if (s.armed) return;  // a second backward of the same step keeps counting
  s.reset_counts();
  s.launched_early = 0;
  s.armed = sync;
}

void GradientReducer::finish() {
  State& s = *state_;
  if (!s.armed) return;
  s.armed = false;
  for (; s.next_to_launch < s.buckets.size(); ++s.next_to_launch) s.launch(s.buckets[s.next_to_launch]);
  NoGradGuard no_grad;
  const Device device = s.params.front().device();
  DeviceRuntime* rt = device.is_cpu() ? nullptr : &device_runtime(device.kind);
  auto backward_done = rt && s.measure_exposed ? rt->record_timing_event(device.index) : nullptr;
  for (State::Bucket& b : s.buckets) {
    b.work->wait();
    int64_t offset = 0;
    for (size_t i : b.params) {
      const Tensor& p = s.params[i];
      p.set_grad(view_in_format(b.flat, offset, p));
      offset += p.numel();
    }
    b.work.reset();
  }
  if (backward_done) s.exposed.emplace_back(backward_done, rt->record_timing_event(device.index));
}

void GradientReducer::measure_exposed_communication(bool on) {
  state_->measure_exposed = on;
  if (!on) state_->exposed.clear();
}

double GradientReducer::exposed_communication_ms() {
  State& s = *state_;
  if (s.exposed.empty()) return 0.0;
  DeviceRuntime& rt = device_runtime(s.params.front().device().kind);
  double total = 0;
  for (const auto& [start, end] : s.exposed) total += rt.elapsed_ms(*start, *end);
  const double mean = total / static_cast<double>(s.exposed.size());
  s.exposed.clear();
  return mean;
}

size_t GradientReducer::num_buckets() const { return state_->buckets.size(); }

std::vector<std::vector<size_t>> GradientReducer::bucket_layout() const {
  std::vector<std::vector<size_t>> out;
  for (const State::Bucket& b : state_->buckets) out.push_back(b.params);
  return out;
}

size_t GradientReducer::launched_during_backward() const { return state_->launched_early; }

}  // namespace hearth::distributed
