// Which ops a workload runs by kernel: while on, dispatch records the name of
// every op whose kernel runs (a fusion's composition records the primitives it
// dispatches, not the fusion). `hearth ops --minimal` traces training steps
// with it to list the primitives a backend must implement.
#pragma once

#include <set>
#include <string>

namespace hearth {

// Turning it on forgets what was recorded before.
void set_dispatch_trace(bool on);
std::set<std::string> traced_ops();

}  // namespace hearth
