// Shared helpers of the GPU tests: the skip when no GPU is usable, and
// comparison of tensors across devices.
#pragma once

#include <gtest/gtest.h>

#include <string>

#include "hearth/core/device_runtime.h"
#include "hearth/core/tensor.h"
#include "tests/support/tensor_compare.h"

namespace hearth::gpu_testing {

// The cuda device, or empty with the reason when none can be used.
inline bool cuda_usable(std::string* why) {
  DeviceKind k;
  if (!find_device_kind("cuda", &k) || !has_device_runtime(k)) {
    *why = "the cuda device kind is not registered";
    return false;
  }
  DeviceRuntime& rt = device_runtime(k);
  if (!rt.is_available()) {
    *why = rt.unavailable_reason();
    return false;
  }
  return true;
}

inline Device cuda0() { return Device::parse("cuda:0"); }

using testing::max_abs_diff;
using testing::relative_error;

}  // namespace hearth::gpu_testing

#define HEARTH_REQUIRE_CUDA()                                                    \
  do {                                                                           \
    std::string why_;                                                            \
    if (!::hearth::gpu_testing::cuda_usable(&why_)) GTEST_SKIP() << "no GPU: " << why_; \
  } while (0)
