// The switches of the layers above the backends (a backend declares its own in
// its folder: hearth/backends/<name>/<name>_switches.h). Each accessor returns
// the declared switch; get() its value. hearth/core/switches.h says how they
// are read; switch_list.cpp declares each with its type, default and reader.
#pragma once

#include "hearth/core/switches.h"

namespace hearth::switches {

// Dispatch.
const FlagSwitch& enable_cpu_fallback();
const FlagSwitch& log_dispatch();
const FlagSwitch& cpu_reference();
const WordsSwitch& profile_ops();
const IntegerSwitch& profile_ops_rows();
// The CPU runtime.
const WordsSwitch& cpu_level();
const BytesSwitch& cpu_memory_limit();
// What the backend options start from (hearth/core/backend_options.h).
const FlagSwitch& allow_tf32();
const FlagSwitch& convolution_benchmark();
// Ops and models.
const FlagSwitch& fused_attention();
const FlagSwitch& fold_batch_norm();
const FlagSwitch& check_indices();
// Data.
const FlagSwitch& image_fast_decode();
const WordsSwitch& image_decoder();
// Data parallelism.
const NumberSwitch& dist_timeout();
const TextSwitch& store_token();
// Programs.
const TextSwitch& config_file();
// Test hooks for failure handling.
const IntegerSwitch& test_fail_write();
const FlagSwitch& test_fail_remove();
const IntegerSwitch& test_pause_write_ms();

}  // namespace hearth::switches
