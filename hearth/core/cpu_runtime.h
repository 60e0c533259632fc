// The CPU's device runtime: host memory, 64-byte aligned so vectorised kernels
// never straddle cache lines, with the accounting an accelerator's allocator
// keeps (active, peak, a limit), so that memory tools (hearth estimate-memory,
// the Trainer's auto_find_batch_size) work and are tested on the CPU too.
//
// A limit makes allocate() throw OutOfMemoryError once the live tensors would
// exceed it, like a smaller device: HEARTH_CPU_MEMORY_LIMIT (bytes, or with a
// KiB/MiB/GiB suffix) sets it at start-up, set_memory_limit() at any time.
#pragma once

#include <cstddef>
#include <memory>
#include <string>

#include "hearth/core/device_runtime.h"

namespace hearth {

std::unique_ptr<DeviceRuntime> make_cpu_runtime();

// "512MiB" -> 536870912; "1.5GiB", "1000", "64KiB"; throws ValueError naming `what` otherwise.
size_t parse_byte_size(const std::string& text, const std::string& what);

}  // namespace hearth
