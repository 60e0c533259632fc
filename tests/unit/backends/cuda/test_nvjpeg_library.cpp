// nvJPEG opened at run time (hearth/backends/cuda/image/nvjpeg_library.h),
// where it is missing or is not nvJPEG: one sentence saying what was tried
// and what to do, never a crash. Built in every build; CI machines have no
// nvJPEG.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "hearth/backends/cuda/image/nvjpeg_library.h"
#include "tests/support/scoped_env.h"

namespace hearth::cuda::nvjpeg {
namespace {

using hearth::testing::ScopedEnv;

bool has(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

TEST(NvjpegLibrary, TriesTheSonamesNewestFirstThenTheFoldersGiven) {
  ScopedEnv unset("HEARTH_NVJPEG_LIBRARY", "");
  const std::vector<std::string> tried = nvjpeg_candidates({"/opt/cuda/lib64", ""});
  const std::vector<std::string> expected = {"libnvjpeg.so.13", "libnvjpeg.so.12", "libnvjpeg.so",
                                             "/opt/cuda/lib64/libnvjpeg.so.13", "/opt/cuda/lib64/libnvjpeg.so.12",
                                             "/opt/cuda/lib64/libnvjpeg.so"};
  EXPECT_EQ(tried, expected);
}

TEST(NvjpegLibrary, TheVariableNamesTheOnlyFileTried) {
  ScopedEnv chosen("HEARTH_NVJPEG_LIBRARY", "/nowhere/libnvjpeg.so.13");
  EXPECT_EQ(nvjpeg_candidates({"/opt/cuda/lib64"}), std::vector<std::string>{"/nowhere/libnvjpeg.so.13"});
}

TEST(NvjpegLibrary, AMissingFileIsOneSentenceNamingItAndTheVariable) {
  ScopedEnv chosen("HEARTH_NVJPEG_LIBRARY", "/nowhere/libnvjpeg.so.13");
  const LoadResult r = load_nvjpeg({"/also/nowhere"});
  EXPECT_EQ(r.library, nullptr);
  EXPECT_TRUE(has(r.error, "nvJPEG could not be loaded")) << r.error;
  EXPECT_TRUE(has(r.error, "/nowhere/libnvjpeg.so.13")) << r.error;
  EXPECT_TRUE(has(r.error, "HEARTH_NVJPEG_LIBRARY names a file that cannot be opened")) << r.error;
  EXPECT_FALSE(has(r.error, "/also/nowhere")) << "only the chosen file is tried: " << r.error;
  EXPECT_EQ(r.error.find('\n'), std::string::npos) << "one line: " << r.error;
}

TEST(NvjpegLibrary, WithoutTheLibraryTheMessageListsWhatWasTriedAndWhereItComesFrom) {
  ScopedEnv unset("HEARTH_NVJPEG_LIBRARY", "");
  const LoadResult r = load_nvjpeg({"/nowhere"});
  if (r.library) GTEST_SKIP() << "nvJPEG is installed here (" << r.library->path << ")";
  EXPECT_TRUE(has(r.error, "tried libnvjpeg.so.13, libnvjpeg.so.12, libnvjpeg.so, /nowhere/libnvjpeg.so.13")) << r.error;
  EXPECT_TRUE(has(r.error, "CUDA toolkit")) << r.error;
  EXPECT_TRUE(has(r.error, "LD_LIBRARY_PATH")) << r.error;
}

TEST(NvjpegLibrary, ALibraryThatIsNotNvjpegNamesTheMissingFunction) {
  // Any library the system has: the C math library is always there.
  ScopedEnv chosen("HEARTH_NVJPEG_LIBRARY", "libm.so.6");
  const LoadResult r = load_nvjpeg();
  EXPECT_EQ(r.library, nullptr);
  EXPECT_TRUE(has(r.error, "nvJPEG at libm.so.6 lacks nvjpegGetProperty")) << r.error;
}

TEST(NvjpegLibrary, StatusesHaveTheirDocumentedNames) {
  EXPECT_STREQ(status_name(kSuccess), "NVJPEG_STATUS_SUCCESS");
  EXPECT_STREQ(status_name(kBadJpeg), "NVJPEG_STATUS_BAD_JPEG");
  EXPECT_STREQ(status_name(kIncompleteBitstream), "NVJPEG_STATUS_INCOMPLETE_BITSTREAM");
  EXPECT_STREQ(status_name(99), "an unknown nvJPEG status");
}

}  // namespace
}  // namespace hearth::cuda::nvjpeg
