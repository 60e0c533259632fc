// A per-op time profile for finding where a step's time goes, without an
// external profiler: with HEARTH_PROFILE_OPS=1 every dispatched kernel runs
// between two device synchronisations and its wall time is added to a row
// keyed by (op, device, dtype, shape of the first input). The table, sorted by
// total time, goes to stderr at exit (or op_profile_report() on demand).
// Synchronising every op slows the program: use it to compare ops, not to
// measure throughput.
#pragma once

#include <string>

#include "hearth/dispatch/op_call.h"

namespace hearth {

bool op_profiling_enabled();
void record_op_time(const std::string& op, const OpCall& call, Device device, double seconds);
// The rows so far, the most expensive first; `limit` rows at most.
std::string op_profile_report(size_t limit = 40);
void reset_op_profile();

}  // namespace hearth
