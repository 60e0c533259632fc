#include <gtest/gtest.h>

#include "hearth/core/cpu_runtime.h"
#include "hearth/core/device_runtime.h"
#include "hearth/core/errors.h"
#include "hearth/ops/factory.h"

namespace hearth {
namespace {

// Restores the CPU's memory limit when a test ends.
struct LimitGuard {
  explicit LimitGuard(size_t bytes) : before(device_runtime(kCpu).memory_stats(0).limit) {
    device_runtime(kCpu).set_memory_limit(0, bytes);
  }
  ~LimitGuard() { device_runtime(kCpu).set_memory_limit(0, before); }
  size_t before;
};

TEST(CpuRuntime, CountsLiveTensorsAndThePeak) {
  DeviceRuntime& rt = device_runtime(kCpu);
  const size_t before = rt.memory_stats(0).active;
  rt.reset_peak_memory_stats(0);
  {
    Tensor a = zeros({1000}, DType::float32);  // 4000 bytes, rounded up to 4032
    EXPECT_EQ(rt.memory_stats(0).active, before + 4032);
    {
      Tensor b = zeros({250}, DType::float64);  // 2000 -> 2048
      EXPECT_EQ(rt.memory_stats(0).active, before + 4032 + 2048);
    }
    EXPECT_EQ(rt.memory_stats(0).active, before + 4032);
  }
  EXPECT_EQ(rt.memory_stats(0).active, before);
  EXPECT_EQ(rt.memory_stats(0).peak_active, before + 4032 + 2048);
}

TEST(CpuRuntime, ALimitMakesAllocationsBeyondItOutOfMemory) {
  DeviceRuntime& rt = device_runtime(kCpu);
  const size_t active = rt.memory_stats(0).active;
  LimitGuard limit(active + 64 * 1024);
  Tensor fits = zeros({8 * 1024}, DType::float32);  // 32 KiB
  const size_t ooms = rt.memory_stats(0).num_ooms;
  try {
    zeros({16 * 1024}, DType::float32);  // 64 KiB more: over the limit
    FAIL() << "expected OutOfMemoryError";
  } catch (const OutOfMemoryError& e) {
    EXPECT_NE(std::string(e.what()).find("[cpu] out of memory: tried to allocate 0.1 MiB"), std::string::npos)
        << e.what();
    EXPECT_NE(std::string(e.what()).find("HEARTH_CPU_MEMORY_LIMIT"), std::string::npos) << e.what();
  }
  EXPECT_EQ(rt.memory_stats(0).num_ooms, ooms + 1);
  EXPECT_EQ(rt.memory_stats(0).active, active + 32 * 1024);  // the failed request is not counted
}

TEST(CpuRuntime, ByteSizesTakeUnits) {
  EXPECT_EQ(parse_byte_size("1000", "x"), 1000u);
  EXPECT_EQ(parse_byte_size("64KiB", "x"), 65536u);
  EXPECT_EQ(parse_byte_size("1.5GiB", "x"), 1610612736u);
  EXPECT_EQ(parse_byte_size("512M", "x"), 536870912u);
  try {
    parse_byte_size("lots", "HEARTH_CPU_MEMORY_LIMIT");
    FAIL();
  } catch (const ValueError& e) {
    EXPECT_NE(std::string(e.what()).find("HEARTH_CPU_MEMORY_LIMIT: expected a size in bytes"), std::string::npos);
  }
}

}  // namespace
}  // namespace hearth
