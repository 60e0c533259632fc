// The host threads that decode a share of each image batch
// (hearth/backends/common/host_decode_pool.h). Plain C++: runs in every build.
#include <atomic>
#include <chrono>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include <gtest/gtest.h>

#include "hearth/backends/common/host_decode_pool.h"
#include "hearth/core/errors.h"
#include "tests/support/scoped_env.h"

namespace hearth::backends {
namespace {

using hearth::testing::ScopedEnv;

TEST(HostDecodePool, EveryJobRunsOnceWhicheverThreadsTakeThem) {
  HostDecodePool pool(4);
  EXPECT_EQ(pool.threads(), 4u);
  // Several starters at once, as the decoding lanes are.
  constexpr int kStarters = 3, kSets = 40, kJobs = 37;
  std::vector<std::atomic<int>> runs(kStarters * kSets * kJobs);
  std::vector<std::thread> starters;
  std::atomic<size_t> ran_by_starters{0};
  for (int st = 0; st < kStarters; ++st)
    starters.emplace_back([&, st] {
      for (int set = 0; set < kSets; ++set) {
        const size_t base = static_cast<size_t>((st * kSets + set) * kJobs);
        auto jobs = pool.start(kJobs, [&, base](size_t i) { runs[base + i].fetch_add(1); });
        ran_by_starters += pool.finish(*jobs);
      }
    });
  for (std::thread& t : starters) t.join();
  for (size_t i = 0; i < runs.size(); ++i) ASSERT_EQ(runs[i].load(), 1) << "job " << i;
  EXPECT_LE(ran_by_starters.load(), runs.size());
}

TEST(HostDecodePool, WithoutThreadsTheStarterRunsEveryJob) {
  HostDecodePool pool(0);
  std::vector<int> runs(9, 0);
  auto jobs = pool.start(runs.size(), [&](size_t i) { ++runs[i]; });
  EXPECT_EQ(pool.finish(*jobs), 9u);
  for (int r : runs) EXPECT_EQ(r, 1);
}

TEST(HostDecodePool, FinishWaitsForTheJobsRunningOnTheThreads) {
  HostDecodePool pool(2);
  std::atomic<int> started{0}, done{0};
  auto jobs = pool.start(2, [&](size_t) {
    ++started;
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
    ++done;
  });
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  while (started.load() < 2 && std::chrono::steady_clock::now() < deadline)
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  ASSERT_EQ(started.load(), 2) << "both threads took a job";
  EXPECT_EQ(pool.finish(*jobs), 0u) << "nothing was left for the starter";
  EXPECT_EQ(done.load(), 2) << "finish returned before the jobs it waits for";
}

TEST(HostDecodePool, AJobsExceptionReachesTheStarterAfterTheOthersFinish) {
  HostDecodePool pool(3);
  std::atomic<int> done{0};
  auto jobs = pool.start(20, [&](size_t i) {
    if (i == 7) throw std::runtime_error("job 7 failed");
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
    ++done;
  });
  try {
    pool.finish(*jobs);
    FAIL() << "no exception";
  } catch (const std::runtime_error& e) {
    EXPECT_EQ(std::string(e.what()), "job 7 failed");
  }
  EXPECT_EQ(done.load(), 19);
  // The pool goes on serving.
  std::atomic<int> after{0};
  auto more = pool.start(5, [&](size_t) { ++after; });
  pool.finish(*more);
  EXPECT_EQ(after.load(), 5);
}

TEST(HostDecodePool, TheThreadCountIsReadOrRefusedWithItsName) {
  {
    ScopedEnv unset("HEARTH_IMAGE_HOST_THREADS", "");
    const unsigned cores = std::thread::hardware_concurrency();
    EXPECT_EQ(host_decode_threads_from_env(), cores > 4 ? cores - 4 : 0u);
  }
  {
    ScopedEnv six("HEARTH_IMAGE_HOST_THREADS", "6");
    EXPECT_EQ(host_decode_threads_from_env(), 6u);
  }
  for (const char* bad : {"many", "-2", "257", "4.5"}) {
    ScopedEnv v("HEARTH_IMAGE_HOST_THREADS", bad);
    try {
      host_decode_threads_from_env();
      FAIL() << "no error for " << bad;
    } catch (const ValueError& e) {
      EXPECT_NE(std::string(e.what()).find("HEARTH_IMAGE_HOST_THREADS"), std::string::npos) << e.what();
    }
  }
}

}  // namespace
}  // namespace hearth::backends
