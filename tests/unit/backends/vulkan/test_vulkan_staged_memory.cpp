// Every Vulkan test again in a child process with HEARTH_VULKAN_STAGED_MEMORY=1:
// tensor memory is then used as a discrete GPU's (reserved addresses that
// the host never maps, copies through staging buffers) even on a device
// whose memory the host can map, so that path is tested on any machine.
#include <unistd.h>

#include <climits>
#include <cstdlib>
#include <string>

#include <gtest/gtest.h>

#include "tests/support/run_command.h"
#include "tests/unit/backends/vulkan/vulkan_test_util.h"

namespace hearth {
namespace {

TEST(VulkanStagedMemory, EveryTestPassesWithMemoryTheHostCannotMap) {
  HEARTH_SKIP_WITHOUT_VULKAN();
  if (std::getenv("HEARTH_VULKAN_STAGED_MEMORY") || std::getenv("HEARTH_VULKAN_VALIDATION"))
    GTEST_SKIP() << "runs from the parent process only";
  char self[PATH_MAX];
  const ssize_t n = readlink("/proc/self/exe", self, sizeof self - 1);
  ASSERT_GT(n, 0);
  self[n] = 0;
  const std::string filter = "Vulkan*:-VulkanStagedMemory.*:VulkanValidation*:VulkanRuntime.AForeign*";
  const testing::CommandResult r =
      testing::run_command("HEARTH_VULKAN_STAGED_MEMORY=1 '" + std::string(self) + "' --gtest_filter='" + filter + "'");
  EXPECT_EQ(r.exit_code, 0) << r.output.substr(r.output.size() > 6000 ? r.output.size() - 6000 : 0);
  EXPECT_NE(r.output.find("[  PASSED  ]"), std::string::npos);
}

}  // namespace
}  // namespace hearth
