// Which instruction set the hot CPU kernels run with.
//
// The library is compiled for the distribution's baseline (plain x86-64), so
// it runs on any CPU of the architecture. The hot kernels (elementwise,
// reductions, im2col, pooling, batch norm, the optimizer steps, image resizing)
// are compiled once more for each wider level (cmake/cpu_dispatch.cmake), and
// the copy built for the level chosen here is the one that registers itself at
// start-up. GEMM needs none of this: OpenBLAS dispatches on its own.
//
// The level is chosen once per process: the best this CPU and this build
// support up to avx2 (default_cpu_level), or the one HEARTH_CPU_LEVEL names
// (baseline, avx2, avx512), capped at what the CPU supports, so forcing a level
// can never reach an instruction the CPU lacks.
#pragma once

#include <optional>
#include <string>
#include <string_view>

namespace hearth {

enum class CpuLevel {
  baseline,  // x86-64 as the distribution builds it (SSE2); any other architecture's default
  avx2,      // x86-64-v3: AVX2, FMA, BMI2, F16C
  avx512,    // x86-64-v4: AVX-512 F, BW, CD, DQ, VL
};

const char* cpu_level_name(CpuLevel level);
std::optional<CpuLevel> parse_cpu_level(std::string_view name);

// The best level both this CPU and this build support.
CpuLevel best_cpu_level();
// The level used unless HEARTH_CPU_LEVEL names one: the best, but AVX-512 only
// when asked for. Measured (bench/NOTES.md, "One build for every x86-64 CPU"):
// the small CNN's training took 3.5% more CPU time with the AVX-512 copies
// than with the AVX2 ones (max pooling 14% more) and no kernel ran faster.
CpuLevel default_cpu_level();
// The level the kernels run with (read once; see above).
CpuLevel cpu_level();
// One line for `hearth env`: the level in use and why.
std::string cpu_level_description();

}  // namespace hearth
