#include "hearth/dispatch/op_profiler.h"

#include <algorithm>
#include <cstdio>
#include <iostream>
#include <map>
#include <mutex>
#include <tuple>
#include <vector>

#include "hearth/core/env.h"

namespace hearth {
namespace {

struct Row {
  double seconds = 0;
  int64_t calls = 0;
};

struct Profile {
  std::mutex mu;
  std::map<std::tuple<std::string, std::string, std::string, std::string>, Row> rows;
  double total = 0;
  ~Profile() {
    if (!rows.empty()) std::cerr << report(40);
  }
  std::string report(size_t limit) {
    std::lock_guard<std::mutex> lock(mu);
    std::vector<std::pair<const decltype(rows)::key_type*, Row>> sorted;
    for (const auto& [k, r] : rows) sorted.emplace_back(&k, r);
    std::sort(sorted.begin(), sorted.end(),
              [](const auto& a, const auto& b) { return a.second.seconds > b.second.seconds; });
    std::string out = "hearth op profile (HEARTH_PROFILE_OPS=1; each op timed between device synchronisations)\n";
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

bool op_profiling_enabled() {
  static const bool on = env_flag("HEARTH_PROFILE_OPS");
  return on;
}

void record_op_time(const std::string& op, const OpCall& call, Device device, double seconds) {
  std::string shape = "-", dtype = "-";
  for (const Tensor& t : call.inputs) {
    if (!t.defined()) continue;
    shape = t.shape_string();
    dtype = dtype_name(t.dtype());
    break;
  }
  Profile& p = profile();
  std::lock_guard<std::mutex> lock(p.mu);
  Row& r = p.rows[{op, device.str(), dtype, shape}];
  r.seconds += seconds;
  r.calls += 1;
  p.total += seconds;
}

std::string op_profile_report(size_t limit) { return profile().report(limit); }

void reset_op_profile() {
  Profile& p = profile();
  std::lock_guard<std::mutex> lock(p.mu);
  p.rows.clear();
  p.total = 0;
}

}  // namespace hearth
