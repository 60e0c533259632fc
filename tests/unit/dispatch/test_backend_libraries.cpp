#include "hearth/dispatch/backend_libraries.h"

#include <gtest/gtest.h>

#include <memory>
#include <string>

#include "tests/support/test_device.h"

namespace hearth {
namespace {

TEST(BackendLibraries, TheCpuBackendDescribesItsConvolutionLibrary) {
  // Built with or without oneDNN, the line is there and says which.
  bool found = false;
  for (const BackendLibrary& lib : backend_libraries(kCpu)) {
    if (lib.name != "oneDNN") continue;
    found = true;
    const std::string line = lib.describe();
#if HEARTH_TEST_ONEDNN_BUILT
    EXPECT_EQ(line.rfind("oneDNN ", 0), 0u) << line;
    EXPECT_NE(line.find("ISA "), std::string::npos) << line;
    EXPECT_NE(line.find("threads"), std::string::npos) << line;
#else
    EXPECT_EQ(line.rfind("not built", 0), 0u) << line;
#endif
  }
  EXPECT_TRUE(found);
}

TEST(BackendLibraries, DescribesOnlyWhenAsked) {
  const DeviceKind kind = testing::test_device_kind();
  auto described = std::make_shared<int>(0);  // the registry outlives this test
  register_backend_library(kind, {"lib_a", [described] { return std::to_string(++*described); }});
  register_backend_library(kind, {"lib_b", [] { return std::string("b"); }});
  EXPECT_EQ(*described, 0);
  auto libs = backend_libraries(kind);
  ASSERT_GE(libs.size(), 2u);
  const BackendLibrary& a = libs[libs.size() - 2];
  EXPECT_EQ(a.name, "lib_a");
  EXPECT_EQ(a.describe(), "1");
  EXPECT_EQ(libs.back().describe(), "b");
}

}  // namespace
}  // namespace hearth
