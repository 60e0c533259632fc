// A CUDA build asks the driver for 32 hardware work queues per device unless
// the user chose a number (hearth/backends/cuda/runtime.cu), so the image
// decoder's streams do not queue behind the training stream's kernels. It is
// set before main, so this holds with or without a GPU.
#include <cstdlib>
#include <string>

#include <gtest/gtest.h>

namespace {

TEST(CudaWorkQueues, ACudaBuildAsksForMoreQueuesThanTheDriversEight) {
#if HEARTH_TEST_CUDA_BUILT
  const char* queues = std::getenv("CUDA_DEVICE_MAX_CONNECTIONS");
  ASSERT_NE(queues, nullptr);
  // ctest removes the variable from the environment first (tests/CMakeLists.txt).
  EXPECT_EQ(std::string(queues), "32");
#else
  GTEST_SKIP() << "built without CUDA";
#endif
}

}  // namespace
