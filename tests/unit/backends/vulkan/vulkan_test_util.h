// What the Vulkan backend's tests share: skipping without a device, and
// comparing a Vulkan result with the CPU kernel's on the same inputs.
#pragma once

#include <cmath>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "hearth/core/device_runtime.h"
#include "hearth/core/tensor.h"
#include "hearth/ops/factory.h"

namespace hearth::vulkan_test {

inline bool vulkan_available(std::string* why = nullptr) {
  DeviceKind kind;
  if (!find_device_kind("vulkan", &kind) || !has_device_runtime(kind)) {
    if (why) *why = "no vulkan kind registered";
    return false;
  }
  DeviceRuntime& rt = device_runtime(kind);
  if (!rt.is_available()) {
    if (why) *why = rt.unavailable_reason();
    return false;
  }
  return true;
}

inline Device vk() {
  DeviceKind kind;
  find_device_kind("vulkan", &kind);
  return Device(kind, 0);
}

#define HEARTH_SKIP_WITHOUT_VULKAN()                                                                          \
  do {                                                                                                        \
    std::string why_;                                                                                         \
    if (!::hearth::vulkan_test::vulkan_available(&why_)) GTEST_SKIP() << "no usable Vulkan device: " << why_; \
  } while (0)

// Element-by-element comparison on the CPU, as float64; NaN equals NaN.
inline void expect_close(const Tensor& got, const Tensor& want, double rtol = 1e-5, double atol = 1e-6,
                         const std::string& what = "") {
  ASSERT_EQ(got.shape(), want.shape()) << what;
  ASSERT_EQ(got.dtype(), want.dtype()) << what;
  const std::vector<double> g = got.cpu().to(DType::float64).contiguous().to_vector<double>();
  const std::vector<double> w = want.cpu().to(DType::float64).contiguous().to_vector<double>();
  int reported = 0;
  for (size_t i = 0; i < g.size(); ++i) {
    if (std::isnan(g[i]) && std::isnan(w[i])) continue;
    if (std::isinf(w[i]) && g[i] == w[i]) continue;
    const double tol = atol + rtol * std::abs(w[i]);
    if (!(std::abs(g[i] - w[i]) <= tol)) {
      ADD_FAILURE() << what << ": element " << i << " is " << g[i] << ", the CPU gives " << w[i];
      if (++reported >= 5) return;
    }
  }
}

}  // namespace hearth::vulkan_test
