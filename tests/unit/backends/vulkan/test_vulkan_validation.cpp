// Every Vulkan kernel test again, in a child process with Khronos'
// validation layer on (HEARTH_VULKAN_VALIDATION=1): the layer must report no
// error. The layer is enabled when the instance is made, once per process,
// hence the child.
#include <unistd.h>

#include <climits>
#include <cstdlib>
#include <string>

#include <gtest/gtest.h>

#include "hearth/core/device_runtime.h"
#include "tests/support/run_command.h"
#include "tests/unit/backends/vulkan/vulkan_test_util.h"

namespace hearth {
namespace {

std::string own_executable() {
  char buf[PATH_MAX];
  const ssize_t n = readlink("/proc/self/exe", buf, sizeof buf - 1);
  return n > 0 ? std::string(buf, static_cast<size_t>(n)) : std::string();
}

TEST(VulkanValidation, KernelsRunWithoutValidationErrors) {
  HEARTH_SKIP_WITHOUT_VULKAN();
  if (std::getenv("HEARTH_VULKAN_VALIDATION")) GTEST_SKIP() << "already the child (or validating everything)";
  const std::string self = own_executable();
  ASSERT_FALSE(self.empty());
  // The kernel families' tests; the training test repeats them at length.
  const std::string filter = "Vulkan*:-VulkanValidation.*:VulkanTraining.*:VulkanRuntime.AForeign*";
  const testing::CommandResult r =
      testing::run_command("HEARTH_VULKAN_VALIDATION=1 '" + self + "' --gtest_filter='" + filter + "'");
  if (r.output.find("validation layer is not installed") != std::string::npos)
    GTEST_SKIP() << "the validation layer (vulkan-validationlayers) is not installed";
  EXPECT_EQ(r.exit_code, 0) << r.output.substr(r.output.size() > 4000 ? r.output.size() - 4000 : 0);
  EXPECT_EQ(r.output.find("validation error"), std::string::npos) << r.output.substr(0, 4000);
  EXPECT_NE(r.output.find("[  PASSED  ]"), std::string::npos);
}

// In the child: the runtime says the layer is on.
TEST(VulkanValidationChild, TheLayerIsOnWhenAskedFor) {
  HEARTH_SKIP_WITHOUT_VULKAN();
  if (!std::getenv("HEARTH_VULKAN_VALIDATION")) GTEST_SKIP() << "runs in the validating child";
  EXPECT_NE(device_runtime(vulkan_test::vk().kind).version_info().find("validation layer on"), std::string::npos);
}

}  // namespace
}  // namespace hearth
