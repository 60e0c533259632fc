// The device image decoder's lanes (hearth/backends/common/decode_lanes.h):
// a few batches at once on the device, the rest waiting for a lane. Plain
// C++: runs in every build.
#include <atomic>
#include <chrono>
#include <string>
#include <thread>
#include <vector>

#include <gtest/gtest.h>

#include "hearth/backends/common/decode_lanes.h"
#include "hearth/core/errors.h"
#include "tests/support/scoped_env.h"

namespace hearth::backends {
namespace {

using hearth::testing::ScopedEnv;

void settle() { std::this_thread::sleep_for(std::chrono::milliseconds(50)); }

// Waits up to 10 s for `count` to reach `want`.
void wait_for(const std::atomic<int>& count, int want) {
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  while (count.load() < want && std::chrono::steady_clock::now() < deadline)
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
}

TEST(DecodeLanes, BatchesBeyondTheLanesWaitForOne) {
  DecodeLanes lanes(2);
  lanes.enter();
  lanes.enter();
  std::atomic<int> entered{0};
  std::vector<std::thread> waiters;
  for (int i = 0; i < 3; ++i)
    waiters.emplace_back([&] {
      lanes.enter();
      ++entered;
    });
  settle();
  EXPECT_EQ(entered.load(), 0) << "both lanes are held";
  // Each lane freed lets exactly one waiter in.
  lanes.leave();
  wait_for(entered, 1);
  settle();
  EXPECT_EQ(entered.load(), 1);
  lanes.leave();
  lanes.leave();
  wait_for(entered, 3);
  EXPECT_EQ(entered.load(), 3);
  for (std::thread& t : waiters) t.join();
  for (int i = 0; i < 2; ++i) lanes.leave();
}

TEST(DecodeLanes, NoLimitMeansEveryBatchOnTheDeviceAtOnce) {
  DecodeLanes lanes(0);
  for (int i = 0; i < 16; ++i) lanes.enter();  // would block on a limit
  for (int i = 0; i < 16; ++i) lanes.leave();
  EXPECT_EQ(lanes.lanes(), 0u);
}

TEST(DecodeLanes, TheVariableIsReadOrRefusedWithItsName) {
  {
    ScopedEnv unset("HEARTH_IMAGE_DECODE_LANES", "");
    EXPECT_EQ(decode_lanes_from_env(), 2u);
  }
  {
    ScopedEnv four("HEARTH_IMAGE_DECODE_LANES", "4");
    EXPECT_EQ(decode_lanes_from_env(), 4u);
  }
  for (const char* bad : {"two", "-1", "65", "3x"}) {
    ScopedEnv v("HEARTH_IMAGE_DECODE_LANES", bad);
    try {
      decode_lanes_from_env();
      FAIL() << "no error for " << bad;
    } catch (const ValueError& e) {
      EXPECT_NE(std::string(e.what()).find("HEARTH_IMAGE_DECODE_LANES"), std::string::npos) << e.what();
    }
  }
}

}  // namespace
}  // namespace hearth::backends
