// A per-op time profile for finding where a step's time goes, without an
// external profiler: with HEARTH_PROFILE_OPS=1 every dispatched kernel runs
// between two device synchronisations and its wall time is added to a row
// keyed by (op, device, dtype, shape of the first input). The table, sorted by
// total time, goes to stderr at exit (or op_profile_report() on demand).
// Synchronising every op slows the program: use it to compare ops, not to
// measure throughput.
// With HEARTH_PROFILE_OPS=host nothing is synchronised: each row is the time
// the host spends inside the kernel function (descriptor set-up, allocation,
// launches), which is what an eager step costs when the device outruns the host.
// With HEARTH_PROFILE_OPS=events nothing is synchronised either: a timing event
// is recorded on the device's queue before and after each op and the device
// time between them is read later, so the table is the step's device time per
// op as the device ran it (eager steps only: a step graph's replay dispatches
// nothing).
#pragma once

#include <memory>
#include <string>

#include "hearth/core/device_runtime.h"
#include "hearth/dispatch/op_call.h"

namespace hearth {

enum class OpProfileMode { off, device, host, events };

// From HEARTH_PROFILE_OPS: 1/true/yes/on -> device, "host" -> host, "events" -> events.
OpProfileMode op_profile_mode();
bool op_profiling_enabled();  // op_profile_mode() != off
void record_op_time(const std::string& op, const OpCall& call, Device device, double seconds);
// Events mode: the device time between start and end is added once it is known.
void record_op_events(const std::string& op, const OpCall& call, Device device,
                      std::shared_ptr<DeviceRuntime::TimingEvent> start,
                      std::shared_ptr<DeviceRuntime::TimingEvent> end);
// The rows so far, the most expensive first; `limit` rows at most.
std::string op_profile_report(size_t limit = 40);
void reset_op_profile();

}  // namespace hearth
