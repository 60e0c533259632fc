// The one oneDNN CPU engine and stream hearth runs its primitives on, and
// which dtypes it takes on this CPU.
#pragma once

#include <oneapi/dnnl/dnnl.hpp>

#include "hearth/core/dtype.h"

namespace hearth::cpu::onednn {

dnnl::engine& cpu_engine();
// An in-order stream: primitives execute before execute() returns (the OpenMP
// runtime runs them on the calling thread's team).
dnnl::stream& cpu_stream();

// float32 always; bfloat16 where the CPU computes it natively (AVX512-BF16,
// AMX), since oneDNN's emulation elsewhere is slower than the float detour.
bool supports(DType dtype);
dnnl::memory::data_type to_dnnl(DType dtype);

}  // namespace hearth::cpu::onednn
