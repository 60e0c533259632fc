// The Vulkan runtime: discovery, priorities, memory, copies in both
// directions and within the device, the allocator's statistics, and the
// pipeline cache file.
#include <unistd.h>

#include <climits>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <numeric>

#include <gtest/gtest.h>

#include "hearth/core/device_runtime.h"
#include "hearth/ops/elementwise.h"
#include "hearth/ops/factory.h"
#include "tests/support/run_command.h"
#include "tests/support/scoped_env.h"
#include "tests/support/temp_dir.h"
#include "tests/unit/backends/vulkan/vulkan_test_util.h"

namespace hearth {
namespace {

using vulkan_test::vk;

TEST(VulkanRuntime, IsRegisteredAndSaysWhyWhenUnavailable) {
  DeviceKind kind;
  ASSERT_TRUE(find_device_kind("vulkan", &kind));
  DeviceRuntime& rt = device_runtime(kind);
  if (!rt.is_available()) {
    EXPECT_FALSE(rt.unavailable_reason().empty());
    EXPECT_EQ(rt.device_count(), 0);
    return;
  }
  EXPECT_GE(rt.device_count(), 1);
  EXPECT_FALSE(rt.device_name(0).empty());
  EXPECT_NE(rt.version_info().find("Vulkan"), std::string::npos) << rt.version_info();
}

// `hearth env` prints version_info: after the versions, one line per device
// with what it offers the kernels.
TEST(VulkanRuntime, EnvListsEachDevicesMemorySubgroupAndFloatSupport) {
  HEARTH_SKIP_WITHOUT_VULKAN();
  DeviceRuntime& rt = device_runtime(vk().kind);
  const std::string info = rt.version_info();
  for (int d = 0; d < rt.device_count(); ++d) {
    const std::string head = "\n  vulkan:" + std::to_string(d) + " ";
    const size_t at = info.find(head);
    ASSERT_NE(at, std::string::npos) << info;
    const std::string line = info.substr(at + 1, info.find('\n', at + 1) - at - 1);
    EXPECT_NE(line.find(rt.device_name(d)), std::string::npos) << line;
    EXPECT_NE(line.find(": driver "), std::string::npos) << line;
    EXPECT_NE(line.find(" GiB device-local, "), std::string::npos) << line;
    EXPECT_NE(line.find("; subgroup size "), std::string::npos) << line;
    EXPECT_TRUE(line.find("; float16 yes") != std::string::npos || line.find("; float16 no") != std::string::npos)
        << line;
    EXPECT_TRUE(line.find("; float64 yes") != std::string::npos || line.find("; float64 no") != std::string::npos)
        << line;
    EXPECT_TRUE(line.find("cooperative matrix (VK_KHR_cooperative_matrix) yes") != std::string::npos ||
                line.find("cooperative matrix (VK_KHR_cooperative_matrix) no") != std::string::npos)
        << line;
    // lavapipe (CI's device): memory the host maps, 16- and 64-bit floats,
    // no cooperative matrices; 8 lanes a subgroup on 256-bit vectors.
    if (rt.device_name(d).find("llvmpipe") != std::string::npos) {
      EXPECT_NE(line.find("host-visible (unified"), std::string::npos) << line;
      EXPECT_NE(line.find("; float16 yes; float64 yes"), std::string::npos) << line;
      EXPECT_NE(line.find("cooperative matrix (VK_KHR_cooperative_matrix) no"), std::string::npos) << line;
      if (rt.device_name(d).find("256 bits") != std::string::npos) {
        EXPECT_NE(line.find("; subgroup size 8;"), std::string::npos) << line;
      }
    }
  }
}

TEST(VulkanRuntime, ASoftwareDeviceNeverWinsAuto) {
  HEARTH_SKIP_WITHOUT_VULKAN();
  DeviceRuntime& rt = device_runtime(vk().kind);
  const std::string name = rt.device_name(0);
  // lavapipe names itself llvmpipe; a real GPU ranks below CUDA's 100.
  if (name.find("llvmpipe") != std::string::npos || name.find("SwiftShader") != std::string::npos)
    EXPECT_LT(rt.auto_priority(), 0);
  else
    EXPECT_LT(rt.auto_priority(), 100);
}

TEST(VulkanRuntime, CopiesRoundTripThroughTheDevice) {
  HEARTH_SKIP_WITHOUT_VULKAN();
  std::vector<float> values(1000);
  std::iota(values.begin(), values.end(), -500.0f);
  const Tensor host = tensor(values, {10, 100});
  const Tensor dev = host.to(vk());
  EXPECT_EQ(dev.device(), vk());
  EXPECT_EQ(dev.cpu().to_vector<float>(), values);
  // Device to device (copy_within) and a view at an odd offset.
  const Tensor copy = dev.clone();
  EXPECT_EQ(copy.cpu().to_vector<float>(), values);
  const Tensor row = dev.select(0, 3).narrow(0, 7, 5);
  EXPECT_EQ(row.cpu().to_vector<float>(), (std::vector<float>{-193, -192, -191, -190, -189}));
}

// Copies from the host between kernels are staged and recorded in order;
// many of them cross the command stream's batch boundaries (a batch holds
// at most a few hundred commands), where a staging buffer must live as long
// as the batch that copies from it.
TEST(VulkanRuntime, StagedCopiesInterleavedWithKernelsAcrossBatches) {
  HEARTH_SKIP_WITHOUT_VULKAN();
  Tensor acc = zeros({257}, DType::float32, vk());
  Tensor expected = zeros({257});
  for (int i = 0; i < 400; ++i) {
    const Tensor h = full({257}, static_cast<float>(i % 7));
    acc = add(acc, h.to(vk()));  // the copy is recorded behind the queued adds
    expected = add(expected, h);
  }
  EXPECT_EQ(acc.cpu().to_vector<float>(), expected.to_vector<float>());
}

TEST(VulkanRuntime, MemoryStatsFollowTensors) {
  HEARTH_SKIP_WITHOUT_VULKAN();
  DeviceRuntime& rt = device_runtime(vk().kind);
  const size_t before = rt.memory_stats(0).active;
  {
    const Tensor t = zeros({1024, 256}, DType::float32, vk());
    EXPECT_GE(rt.memory_stats(0).active, before + 1024 * 256 * 4);
    EXPECT_GE(rt.memory_stats(0).reserved, rt.memory_stats(0).active);
  }
  EXPECT_EQ(rt.memory_stats(0).active, before);
  size_t free_b = 0, total_b = 0;
  rt.memory_info(0, &free_b, &total_b);
  EXPECT_GT(total_b, 0u);
}

TEST(VulkanRuntime, TheMemoryLimitRefusesWithAnOutOfMemoryError) {
  HEARTH_SKIP_WITHOUT_VULKAN();
  DeviceRuntime& rt = device_runtime(vk().kind);
  ASSERT_TRUE(rt.set_memory_limit(0, rt.memory_stats(0).active + (1 << 20)));
  EXPECT_THROW(zeros({1 << 22}, DType::float32, vk()), OutOfMemoryError);
  rt.set_memory_limit(0, 0);
  EXPECT_NO_THROW(zeros({1 << 22}, DType::float32, vk()));
}

TEST(VulkanRuntime, ThePipelineCacheIsWrittenWhereTheEnvironmentSays) {
  HEARTH_SKIP_WITHOUT_VULKAN();
  // The path is read when the device is opened: set in the environment of the
  // whole test binary by the first Vulkan test that runs, so only check that
  // a file exists where pipeline_cache_path() says, if caching is on.
  const char* xdg = std::getenv("XDG_CACHE_HOME");
  const char* home = std::getenv("HOME");
  zeros({4}, DType::float32, vk()).fill_(1.0f).cpu();  // builds at least one pipeline
  std::string path;
  if (xdg && *xdg)
    path = std::string(xdg) + "/hearth/vulkan_pipeline_cache.bin";
  else if (home && *home)
    path = std::string(home) + "/.cache/hearth/vulkan_pipeline_cache.bin";
  if (path.empty() || std::getenv("HEARTH_VULKAN_PIPELINE_CACHE")) GTEST_SKIP() << "no cache path";
  EXPECT_TRUE(std::filesystem::exists(path)) << path;
}

// A cache file from another device or driver (or not a cache at all) is
// ignored and replaced by this device's. The path is read when the device is
// opened, so a child process runs with it.
TEST(VulkanRuntime, AForeignPipelineCacheFileIsIgnoredAndReplaced) {
  HEARTH_SKIP_WITHOUT_VULKAN();
  if (std::getenv("HEARTH_VULKAN_PIPELINE_CACHE")) GTEST_SKIP() << "the child";
  char self[PATH_MAX];
  const ssize_t n = readlink("/proc/self/exe", self, sizeof self - 1);
  ASSERT_GT(n, 0);
  self[n] = 0;
  testing::TempDir dir;
  const std::string path = dir.path() + "/cache.bin";
  {
    std::ofstream out(path, std::ios::binary);
    const std::string foreign(64, '\x5a');  // a header naming no real device
    out << foreign;
  }
  const testing::CommandResult r =
      testing::run_command("HEARTH_VULKAN_PIPELINE_CACHE='" + path + "' '" + std::string(self) +
                           "' --gtest_filter=VulkanCopy.FillWritesEveryDtype");
  EXPECT_EQ(r.exit_code, 0) << r.output;
  std::ifstream in(path, std::ios::binary);
  std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  ASSERT_GE(bytes.size(), 32u);
  uint32_t header_size = 0, header_version = 0;
  std::memcpy(&header_size, bytes.data(), 4);
  std::memcpy(&header_version, bytes.data() + 4, 4);
  EXPECT_EQ(header_size, 32u) << "a VkPipelineCacheHeaderVersionOne";
  EXPECT_EQ(header_version, 1u);
}

}  // namespace
}  // namespace hearth
