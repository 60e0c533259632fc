#include "hearth/dispatch/op_profiler.h"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <iostream>
#include <map>
#include <mutex>
#include <tuple>
#include <vector>

#include "hearth/core/switch_list.h"

namespace hearth {
namespace {

struct Row {
  double seconds = 0;
  int64_t calls = 0;
};

using RowKey = std::tuple<std::string, std::string, std::string, std::string>;

struct PendingEvents {
  RowKey key;
  Device device;
  std::shared_ptr<DeviceRuntime::TimingEvent> start, end;
};

// Events resolved at most this many at a time: the wait for the last one
// drains the device's queue, which the profile should do rarely.
constexpr size_t kMaxPending = 4096;

// The table's longest rows first: 40 unless HEARTH_PROFILE_OPS_ROWS asks for
// another number (every row of a model's step, to count its small kernels).
size_t rows_to_print() { return static_cast<size_t>(switches::profile_ops_rows().get()); }

struct Profile {
  std::mutex mu;
  std::map<RowKey, Row> rows;
  std::vector<PendingEvents> pending;
  double total = 0;
  // Destroyed before the device runtime's own exit handlers run (constructed
  // after it, at the first profiled op), so pending events can still be read.
  ~Profile() {
    resolve();
    if (!rows.empty()) std::cerr << report(rows_to_print());
  }
  void add(const RowKey& k, double seconds) {
    Row& r = rows[k];
    r.seconds += seconds;
    r.calls += 1;
    total += seconds;
  }
  void resolve() {
    std::lock_guard<std::mutex> lock(mu);
    for (const PendingEvents& p : pending)
      add(p.key, device_runtime(p.device.kind).elapsed_ms(*p.start, *p.end) * 1e-3);
    pending.clear();
  }
  std::string report(size_t limit) {
    std::lock_guard<std::mutex> lock(mu);
    std::vector<std::pair<const decltype(rows)::key_type*, Row>> sorted;
    for (const auto& [k, r] : rows) sorted.emplace_back(&k, r);
    std::sort(sorted.begin(), sorted.end(),
              [](const auto& a, const auto& b) { return a.second.seconds > b.second.seconds; });
    const OpProfileMode mode = op_profile_mode();
    std::string out = mode == OpProfileMode::host
                          ? "hearth op profile (HEARTH_PROFILE_OPS=host; host time inside each kernel function)\n"
                      : mode == OpProfileMode::events
                          ? "hearth op profile (HEARTH_PROFILE_OPS=events; device time between events around each op)\n"
                          : "hearth op profile (HEARTH_PROFILE_OPS=1; each op timed between device synchronisations)\n";
    char line[400];
    std::snprintf(line, sizeof line, "%-22s %-7s %-9s %-28s %8s %11s %10s %6s\n", "op", "device", "dtype", "input",
                  "calls", "total ms", "ms/call", "share");
    out += line;
    for (size_t i = 0; i < sorted.size() && i < limit; ++i) {
      const auto& [op, dev, dt, shape] = *sorted[i].first;
      const Row& r = sorted[i].second;
      std::snprintf(line, sizeof line, "%-22s %-7s %-9s %-28s %8lld %11.2f %10.4f %5.1f%%\n", op.c_str(), dev.c_str(),
                    dt.c_str(), shape.substr(0, 28).c_str(), static_cast<long long>(r.calls), r.seconds * 1e3,
                    r.seconds * 1e3 / static_cast<double>(r.calls), total > 0 ? 100.0 * r.seconds / total : 0.0);
      out += line;
    }
    // The same time summed per op over every shape: which op family to fuse
    // or speed up first.
    std::map<std::string, Row> per_op;
    for (const auto& [k, r] : rows) {
      Row& t = per_op[std::get<0>(k)];
      t.seconds += r.seconds;
      t.calls += r.calls;
    }
    std::vector<std::pair<std::string, Row>> ops(per_op.begin(), per_op.end());
    std::sort(ops.begin(), ops.end(), [](const auto& a, const auto& b) { return a.second.seconds > b.second.seconds; });
    out += "per op, all shapes:\n";
    for (size_t i = 0; i < ops.size() && i < limit; ++i) {
      std::snprintf(line, sizeof line, "%-22s %8lld %11.2f %5.1f%%\n", ops[i].first.c_str(),
                    static_cast<long long>(ops[i].second.calls), ops[i].second.seconds * 1e3,
                    total > 0 ? 100.0 * ops[i].second.seconds / total : 0.0);
      out += line;
    }
    return out;
  }
};

Profile& profile() {
  static Profile p;
  return p;
}

}  // namespace

OpProfileMode op_profile_mode() {
  static const OpProfileMode mode = [] {
    const std::string v = switches::profile_ops().get();
    if (v == "host") return OpProfileMode::host;
    if (v == "events") return OpProfileMode::events;
    bool on = false;
    switch_detail::parse_flag(v, on);  // the switch allows only flag words besides those two
    return on ? OpProfileMode::device : OpProfileMode::off;
  }();
  return mode;
}

bool op_profiling_enabled() { return op_profile_mode() != OpProfileMode::off; }

namespace {

RowKey row_key(const std::string& op, const OpCall& call, Device device) {
  std::string shape = "-", dtype = "-";
  for (const Tensor& t : call.inputs) {
    if (!t.defined()) continue;
    shape = t.shape_string();
    dtype = dtype_name(t.dtype());
    break;
  }
  return {op, device.str(), dtype, shape};
}

}  // namespace

void record_op_time(const std::string& op, const OpCall& call, Device device, double seconds) {
  RowKey key = row_key(op, call, device);
  Profile& p = profile();
  std::lock_guard<std::mutex> lock(p.mu);
  p.add(key, seconds);
}

void record_op_events(const std::string& op, const OpCall& call, Device device,
                      std::shared_ptr<DeviceRuntime::TimingEvent> start,
                      std::shared_ptr<DeviceRuntime::TimingEvent> end) {
  RowKey key = row_key(op, call, device);
  Profile& p = profile();
  bool full = false;
  {
    std::lock_guard<std::mutex> lock(p.mu);
    p.pending.push_back({std::move(key), device, std::move(start), std::move(end)});
    full = p.pending.size() >= kMaxPending;
  }
  if (full) p.resolve();
}

std::string op_profile_report(size_t limit) {
  profile().resolve();
  return profile().report(limit);
}

void reset_op_profile() {
  Profile& p = profile();
  p.resolve();
  std::lock_guard<std::mutex> lock(p.mu);
  p.rows.clear();
  p.total = 0;
}

}  // namespace hearth
