#include "hearth/core/cpu_level.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdlib>

namespace hearth {
namespace {

TEST(CpuLevel, NamesParseBack) {
  for (CpuLevel l : {CpuLevel::baseline, CpuLevel::avx2, CpuLevel::avx512})
    EXPECT_EQ(parse_cpu_level(cpu_level_name(l)), l) << cpu_level_name(l);
  EXPECT_FALSE(parse_cpu_level("AVX2").has_value());
  EXPECT_FALSE(parse_cpu_level("sse4").has_value());
  EXPECT_FALSE(parse_cpu_level("").has_value());
}

TEST(CpuLevel, InUseNeverExceedsWhatTheCpuSupports) {
  EXPECT_LE(cpu_level(), best_cpu_level());
  // Unforced, the default runs: the best up to AVX2; forced (tests/CMakeLists.txt's
  // cpu_level.*), the named one or, beyond the CPU, the best.
  EXPECT_EQ(default_cpu_level(), std::min(best_cpu_level(), CpuLevel::avx2));
  const char* forced = std::getenv("HEARTH_CPU_LEVEL");
  if (forced == nullptr || *forced == '\0') {
    EXPECT_EQ(cpu_level(), default_cpu_level());
  } else if (auto asked = parse_cpu_level(forced)) {
    EXPECT_EQ(cpu_level(), std::min(*asked, best_cpu_level()));
  }
  EXPECT_NE(cpu_level_description().find(cpu_level_name(cpu_level())), std::string::npos);
}

#if defined(__x86_64__) && HEARTH_TEST_CPU_DISPATCH
TEST(CpuLevel, DetectionAgreesWithTheCompilersView) {
  // A build with the wider copies (HEARTH_CPU_DISPATCH): the best level is
  // what the CPU has.
  __builtin_cpu_init();
  if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma"))
    EXPECT_GE(best_cpu_level(), CpuLevel::avx2);
  else
    EXPECT_EQ(best_cpu_level(), CpuLevel::baseline);
}
#endif

}  // namespace
}  // namespace hearth
