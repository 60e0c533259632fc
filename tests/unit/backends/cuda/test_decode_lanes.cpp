// Where the device image decoder makes each batch
// (hearth/backends/cuda/image/decode_lanes.h): a few batches at once on the
// device, the rest waiting for a lane, or made on the host when the wait
// would be longer than the host takes. Plain C++: runs in every build.
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <thread>
#include <vector>

#include "hearth/backends/cuda/image/decode_lanes.h"
#include "hearth/core/errors.h"
#include "tests/support/scoped_env.h"

namespace hearth::cuda {
namespace {

using hearth::testing::ScopedEnv;
using Route = DecodeLanes::Route;

// Starts `count` threads that each enter (they block while the lanes are
// held) and counts those that got a lane.
struct Waiters {
  std::atomic<int> entered{0};
  std::vector<std::thread> threads;
  Waiters(DecodeLanes& lanes, int count) {
    for (int i = 0; i < count; ++i)
      threads.emplace_back([&] {
        EXPECT_EQ(lanes.enter(128), Route::device);
        ++entered;
      });
  }
  // Frees one lane at a time (each waiter takes the lane freed before the
  // next is freed, as batches finishing one by one do), then each waiter's.
  void release_all(DecodeLanes& lanes, double seconds) {
    for (size_t i = 0; i < threads.size(); ++i) {
      lanes.leave_device(128, seconds);
      const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
      while (entered.load() < static_cast<int>(i) + 1 && std::chrono::steady_clock::now() < deadline)
        std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
    for (std::thread& t : threads) t.join();
    for (size_t i = 0; i < threads.size(); ++i) lanes.leave_device(128, seconds);
  }
};

void settle() { std::this_thread::sleep_for(std::chrono::milliseconds(50)); }

TEST(DecodeLanes, BatchesBeyondTheLanesWaitForOne) {
  DecodeLanes lanes(2, /*host_spill=*/true);
  EXPECT_EQ(lanes.enter(128), Route::device);
  EXPECT_EQ(lanes.enter(128), Route::device);
  // Nothing measured yet: no reason to go to the host, so the third waits.
  Waiters third(lanes, 1);
  settle();
  EXPECT_EQ(third.entered.load(), 0);
  third.release_all(lanes, 0.01);
  EXPECT_EQ(third.entered.load(), 1);
  EXPECT_NEAR(lanes.device_seconds_per_image(), 0.01 / 128, 1e-12);
  lanes.leave_device(128, 0.01);
}

TEST(DecodeLanes, ABatchTheHostWouldFinishSoonerIsMadeOnTheHost) {
  DecodeLanes lanes(2, /*host_spill=*/true);
  // The device takes 50 ms a batch; the host is guessed at 1 ms an image (128 ms).
  ASSERT_EQ(lanes.enter(128), Route::device);
  lanes.leave_device(128, 0.05);
  ASSERT_EQ(lanes.enter(128), Route::device);
  ASSERT_EQ(lanes.enter(128), Route::device);
  // Lanes busy and 0, 1 or 2 waiting: 1.5, 2 or 2.5 batches (75, 100, 125
  // ms) beat the host's 128 ms, so these three wait.
  Waiters queued(lanes, 3);
  settle();
  EXPECT_EQ(queued.entered.load(), 0);
  // Three waiting: 1.5 + 1.5 batches (150 ms) are slower than the host.
  EXPECT_EQ(lanes.enter(128), Route::host);
  lanes.record_host(128, 0.064);
  EXPECT_NEAR(lanes.host_seconds_per_image(), 0.5e-3, 1e-12);
  queued.release_all(lanes, 0.05);
  EXPECT_EQ(queued.entered.load(), 3);
  lanes.leave_device(128, 0.05);
}

TEST(DecodeLanes, AHostSlowerThanTheQueueIsNotUsed) {
  DecodeLanes lanes(1, /*host_spill=*/true);
  ASSERT_EQ(lanes.enter(128), Route::device);
  lanes.leave_device(128, 0.01);  // 10 ms a batch: the device alone
  lanes.record_host(128, 0.1);    // 100 ms a batch on the host
  ASSERT_EQ(lanes.enter(128), Route::device);
  Waiters queued(lanes, 6);  // at most 6.5 batches (65 ms) ahead of the last
  settle();
  EXPECT_EQ(queued.entered.load(), 0);
  queued.release_all(lanes, 0.01);
  EXPECT_EQ(queued.entered.load(), 6);
  lanes.leave_device(128, 0.01);
}

TEST(DecodeLanes, TheAveragesFollowTheNewestBatchesAQuarterAtATime) {
  DecodeLanes lanes(1, /*host_spill=*/true);
  ASSERT_EQ(lanes.enter(100), Route::device);
  lanes.leave_device(100, 0.1);  // the first sets the average: 1 ms
  ASSERT_EQ(lanes.enter(100), Route::device);
  lanes.leave_device(100, 0.5);  // 5 ms: a quarter of the way
  EXPECT_NEAR(lanes.device_seconds_per_image(), 2e-3, 1e-12);
  lanes.record_host(100, 0.3);  // the first host batch replaces the guess
  EXPECT_NEAR(lanes.host_seconds_per_image(), 3e-3, 1e-12);
}

TEST(DecodeLanes, LanesLeftIdleForgetTheDevicesTimeUntilABatchIsTimedAgain) {
  DecodeLanes lanes(1, /*host_spill=*/true);
  ASSERT_EQ(lanes.enter(128), Route::device);
  lanes.leave_device(128, 1.0);  // a slow device: under training, say
  std::this_thread::sleep_for(std::chrono::milliseconds(80));
  // Another load begins: the slow time no longer holds, so a queue forms
  // for the device rather than sending batches to the host.
  ASSERT_EQ(lanes.enter(128), Route::device);
  EXPECT_EQ(lanes.device_seconds_per_image(), 0.0);
  Waiters queued(lanes, 5);
  settle();
  EXPECT_EQ(queued.entered.load(), 0);
  queued.release_all(lanes, 0.01);
  EXPECT_NEAR(lanes.device_seconds_per_image(), 0.01 / 128, 1e-9);
  lanes.leave_device(128, 0.01);
}

TEST(DecodeLanes, WithoutHostDecodingEveryBatchWaitsForTheDevice) {
  DecodeLanes lanes(1, /*host_spill=*/false);
  ASSERT_EQ(lanes.enter(128), Route::device);
  lanes.leave_device(128, 10.0);  // however slow the device
  ASSERT_EQ(lanes.enter(128), Route::device);
  Waiters queued(lanes, 4);  // the later ones would go to the host if they could
  settle();
  EXPECT_EQ(queued.entered.load(), 0);
  queued.release_all(lanes, 10.0);
  EXPECT_EQ(queued.entered.load(), 4);
  lanes.leave_device(128, 10.0);
}

TEST(DecodeLanes, NoLimitMeansEveryBatchOnTheDeviceAtOnce) {
  DecodeLanes lanes(0, /*host_spill=*/true);
  for (int i = 0; i < 16; ++i) EXPECT_EQ(lanes.enter(128), Route::device);
  for (int i = 0; i < 16; ++i) lanes.leave_device(128, 1.0);
}

TEST(DecodeLanes, TheVariablesAreReadOrRefusedWithTheirNames) {
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
    EXPECT_THROW(decode_lanes_from_env(), ValueError) << bad;
  }
  {
    ScopedEnv unset("HEARTH_IMAGE_HOST_DECODING", "");
    EXPECT_FALSE(host_decoding_from_env()) << "off by default";
  }
  {
    ScopedEnv on("HEARTH_IMAGE_HOST_DECODING", "auto");
    EXPECT_TRUE(host_decoding_from_env());
  }
  {
    ScopedEnv off("HEARTH_IMAGE_HOST_DECODING", "off");
    EXPECT_FALSE(host_decoding_from_env());
  }
  ScopedEnv bad("HEARTH_IMAGE_HOST_DECODING", "sometimes");
  try {
    host_decoding_from_env();
    FAIL() << "no error";
  } catch (const ValueError& e) {
    EXPECT_NE(std::string(e.what()).find("HEARTH_IMAGE_HOST_DECODING must be auto or off"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace hearth::cuda
