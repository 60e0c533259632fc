// The CPU backend's reference kernels are hearth's own loops and OpenBLAS
// GEMMs; where a faster library is built in (oneDNN, for convolutions) the
// backend prefers it. Its results differ from the reference in rounding only
// (another order of summation), which is what a test of exact arithmetic, a
// golden file or a bisection of a numerical difference must not see. This
// switch sends every CPU call to the reference kernels.
#pragma once

namespace hearth {

// True while HEARTH_CPU_REFERENCE is set to a true value (read at every call,
// like the CPU fallback's switch) or a ForceCpuReference is alive on any thread.
bool cpu_reference_forced();

// Forces the reference kernels for its lifetime; nests.
class ForceCpuReference {
 public:
  ForceCpuReference();
  ~ForceCpuReference();
  ForceCpuReference(const ForceCpuReference&) = delete;
  ForceCpuReference& operator=(const ForceCpuReference&) = delete;
};

}  // namespace hearth
