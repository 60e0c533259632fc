// Why CUDA cannot be used: one cause per case, each message saying what to do
// about it. The CUDA runtime (runtime.cu) or, in a build without it, the stub
// that stands in for it (hearth/backends/no_cuda/) classifies what it found
// into a CudaProbe and reports the text as DeviceRuntime::unavailable_reason(),
// which is all the layers above see. This file is plain C++ that every build
// compiles (cmake/cuda.cmake adds it to the stub's sources), so each message is
// tested on machines without a GPU or a CUDA toolkit.
#pragma once

#include <string>

namespace hearth::cuda {

enum class CudaProblem {
  none,                // at least one usable device
  built_without_cuda,  // the CUDA backend was not compiled in
  devices_hidden,      // CUDA_VISIBLE_DEVICES selects no device
  driver_not_loaded,   // libcuda.so.1 cannot be opened
  driver_too_old,      // the driver supports an older CUDA than the runtime
  no_device,           // the driver loads but reports no GPU
  compute_prohibited,  // every device is in the "prohibited" compute mode
  devices_busy,        // every device is exclusive and taken by another process
  other,               // any other initialisation error (error_text says which)
};

struct CudaProbe {
  CudaProblem problem = CudaProblem::none;
  int runtime_version = 0;                  // 12040 for CUDA 12.4; 0 unknown
  int driver_version = 0;                   // what the driver supports; 0 when no driver answered
  std::string visible_devices = "<unset>";  // CUDA_VISIBLE_DEVICES as read
  std::string driver_library;               // the library that failed to load
  std::string error_text;                   // dlerror() or the CUDA error string
};

// Whether a CUDA_VISIBLE_DEVICES value selects no device at all: empty, "-1",
// "none", "NoDevFiles", or a list whose first entry is not a device (CUDA
// stops at the first invalid entry).
bool cuda_visible_devices_hides_all(const std::string& value);
// "12.4" from 12040.
std::string cuda_version_string(int version);
// The reason, ending with what to do; empty for CudaProblem::none.
std::string describe_cuda_problem(const CudaProbe& probe);

}  // namespace hearth::cuda
