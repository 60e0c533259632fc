#include "hearth/dispatch/cpu_reference.h"

#include <gtest/gtest.h>

#include "tests/support/scoped_env.h"

namespace hearth {
namespace {

TEST(CpuReference, OffUnlessAskedFor) {
  testing::ScopedEnv off("HEARTH_CPU_REFERENCE", "0");
  EXPECT_FALSE(cpu_reference_forced());
}

TEST(CpuReference, GuardsNestAndEnd) {
  testing::ScopedEnv off("HEARTH_CPU_REFERENCE", "0");
  {
    ForceCpuReference outer;
    EXPECT_TRUE(cpu_reference_forced());
    {
      ForceCpuReference inner;
      EXPECT_TRUE(cpu_reference_forced());
    }
    EXPECT_TRUE(cpu_reference_forced());
  }
  EXPECT_FALSE(cpu_reference_forced());
}

TEST(CpuReference, TheVariableIsReadAtEveryCall) {
  {
    testing::ScopedEnv on("HEARTH_CPU_REFERENCE", "1");
    EXPECT_TRUE(cpu_reference_forced());
  }
  testing::ScopedEnv off("HEARTH_CPU_REFERENCE", "no");
  EXPECT_FALSE(cpu_reference_forced());
}

}  // namespace
}  // namespace hearth
