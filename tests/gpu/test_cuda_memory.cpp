// The CUDA allocator: statistics, no device allocations in a steady loop, the
// out-of-memory message, and the HEARTH_CUDA_MEMORY_FRACTION limit.
#include <gtest/gtest.h>

#include <cstdlib>

#include "hearth/core/device_runtime.h"
#include "hearth/ops/elementwise.h"
#include "hearth/ops/factory.h"
#include "hearth/ops/linalg.h"
#include "hearth/ops/reduction.h"
#include "tests/gpu/gpu_test_util.h"

namespace hearth::gpu_testing {
namespace {

DeviceRuntime& cuda_runtime() { return device_runtime(cuda0().kind); }

TEST(CudaMemory, StatsTrackActiveAndPeak) {
  HEARTH_REQUIRE_CUDA();
  DeviceRuntime& rt = cuda_runtime();
  rt.synchronize(0);
  size_t before = rt.memory_stats(0).active;
  {
    Tensor t = empty({1 << 20}, DType::float32, cuda0());  // 4 MiB
    MemoryStats s = rt.memory_stats(0);
    EXPECT_GE(s.active, before + (4u << 20));
    EXPECT_GE(s.peak_active, s.active);
    EXPECT_GE(s.reserved, s.active);
  }
  EXPECT_EQ(rt.memory_stats(0).active, before);
}

TEST(CudaMemory, SteadyLoopMakesNoNewDeviceAllocations) {
  HEARTH_REQUIRE_CUDA();
  DeviceRuntime& rt = cuda_runtime();
  Tensor w = randn({256, 256}, DType::float32, cuda0());
  auto step = [&] {
    Tensor x = randn({64, 256}, DType::float32, cuda0());
    Tensor y = relu(matmul(x, w));
    return sum(mul(y, y));
  };
  for (int i = 0; i < 3; ++i) step();  // warm-up fills the pool
  rt.synchronize(0);
  size_t allocs = rt.memory_stats(0).num_device_allocs;
  for (int i = 0; i < 100; ++i) step();
  rt.synchronize(0);
  EXPECT_EQ(rt.memory_stats(0).num_device_allocs, allocs) << "the pool grew during identical steps";
}

TEST(CudaMemory, OutOfMemorySaysWhatWasAskedAndWhatToChange) {
  HEARTH_REQUIRE_CUDA();
  try {
    Tensor t = empty({int64_t(1) << 42}, DType::float32, cuda0());  // 16 TiB
    FAIL() << "expected OutOfMemoryError";
  } catch (const OutOfMemoryError& e) {
    std::string m = e.what();
    EXPECT_NE(m.find("tried to allocate 16384.00 GiB"), std::string::npos) << m;
    EXPECT_NE(m.find("free"), std::string::npos) << m;
    EXPECT_NE(m.find("batch size"), std::string::npos) << m;
  }
  // The device still works afterwards.
  EXPECT_EQ(sum(ones({10}, DType::float32, cuda0())).item<float>(), 10.f);
}

// Runs only under HEARTH_CUDA_MEMORY_FRACTION (a separate CTest entry sets it).
TEST(CudaMemoryLimit, AllocationsBeyondTheFractionFail) {
  HEARTH_REQUIRE_CUDA();
  const char* f = std::getenv("HEARTH_CUDA_MEMORY_FRACTION");
  if (!f) GTEST_SKIP() << "HEARTH_CUDA_MEMORY_FRACTION is not set";
  size_t free_b = 0, total_b = 0;
  cuda_runtime().memory_info(0, &free_b, &total_b);
  double fraction = std::atof(f);
  int64_t over = static_cast<int64_t>(fraction * static_cast<double>(total_b) / 4) + (1 << 20);
  EXPECT_THROW(empty({over}, DType::float32, cuda0()), OutOfMemoryError);
  EXPECT_NO_THROW(empty({over / 4}, DType::float32, cuda0()));
}

}  // namespace
}  // namespace hearth::gpu_testing
