// How much of each image batch the host decodes beside the device
// (hearth/backends/common/host_share.h). Plain C++: runs in every build.
#include <string>

#include <gtest/gtest.h>

#include "hearth/backends/common/host_share.h"
#include "hearth/core/errors.h"
#include "tests/support/scoped_env.h"

namespace hearth::backends {
namespace {

using hearth::testing::ScopedEnv;
using Mode = HostShare::Mode;

TEST(HostShare, NothingGoesToTheHostUntilTheDeviceHasBeenTimed) {
  HostShare share(Mode::automatic, 0.0, 12, 2);
  EXPECT_EQ(share.host_images(128), 0u);
  share.record_host(1e-3);
  EXPECT_EQ(share.host_images(128), 0u);
}

TEST(HostShare, TheSplitFinishesBothPartsTogether) {
  HostShare share(Mode::automatic, 0.0, 12, 2);
  share.record_device(128, 128 * 0.1e-3);  // 0.1 ms an image on a lane
  share.record_host(1.3e-3);               // 1.3 ms an image on a thread
  // a = 12 * 0.1 / (2 * 1.3) = 0.4615; h = 128 a / (1 + a) = 40.4.
  const size_t h = share.host_images(128);
  EXPECT_EQ(h, 40u);
  // Check: the device's 88 images take 8.8 ms, in which the lane's 6
  // threads decode 6 * 8.8 / 1.3 = 40.6 images.
  EXPECT_NEAR(6.0 * (128 - h) * 0.1 / 1.3, static_cast<double>(h), 1.0);
}

TEST(HostShare, ASlowerDeviceGivesTheHostMoreUpToItsLimit) {
  HostShare share(Mode::automatic, 0.0, 12, 2);
  share.record_host(1.3e-3);
  share.record_device(128, 128 * 0.1e-3);
  const size_t evaluating = share.host_images(128);
  HostShare training(Mode::automatic, 0.0, 12, 2);
  training.record_host(1.3e-3);
  training.record_device(128, 128 * 0.36e-3);  // the engines under a training step
  EXPECT_GT(training.host_images(128), evaluating);
  HostShare crawling(Mode::automatic, 0.0, 12, 2);
  crawling.record_host(1.3e-3);
  crawling.record_device(128, 128 * 10e-3);
  EXPECT_EQ(crawling.host_images(128), static_cast<size_t>(128 * kMostHostShare));
}

TEST(HostShare, TheAveragesFollowTheNewestMeasuresAQuarterAtATime) {
  HostShare share(Mode::automatic, 0.0, 4, 2);
  share.record_device(100, 0.1);  // the first sets the average: 1 ms
  share.record_device(100, 0.5);  // 5 ms: a quarter of the way
  EXPECT_NEAR(share.device_seconds_per_image(), 2e-3, 1e-12);
  EXPECT_NEAR(share.host_seconds_per_image(), 2e-3, 1e-12) << "the guess before any measure";
  share.record_host(3e-3);  // the first replaces the guess
  share.record_host(7e-3);
  EXPECT_NEAR(share.host_seconds_per_image(), 4e-3, 1e-12);
}

TEST(HostShare, OffOrWithoutThreadsNothingGoesToTheHost) {
  HostShare off(Mode::off, 0.0, 12, 2);
  off.record_device(128, 1.0);
  EXPECT_EQ(off.host_images(128), 0u);
  HostShare no_threads(Mode::automatic, 0.0, 0, 2);
  no_threads.record_device(128, 1.0);
  EXPECT_EQ(no_threads.host_images(128), 0u);
  HostShare fixed_no_threads(Mode::fixed, 0.5, 0, 2);
  EXPECT_EQ(fixed_no_threads.host_images(128), 0u);
}

TEST(HostShare, AFixedShareIsTakenAsItIs) {
  HostShare share(Mode::fixed, 0.3, 4, 2);
  EXPECT_EQ(share.host_images(128), 38u);  // floor(38.4), with nothing measured
  EXPECT_EQ(share.host_images(3), 0u);
  HostShare all(Mode::fixed, 1.0, 4, 2);
  EXPECT_EQ(all.host_images(128), 128u);
}

TEST(HostShare, TheVariableIsReadOrRefusedWithItsName) {
  double fraction = -1;
  {
    ScopedEnv unset("HEARTH_IMAGE_HOST_DECODING", "");
    EXPECT_EQ(host_share_mode_from_env(&fraction), Mode::off) << "off by default";
  }
  {
    ScopedEnv v("HEARTH_IMAGE_HOST_DECODING", "auto");
    EXPECT_EQ(host_share_mode_from_env(&fraction), Mode::automatic);
  }
  {
    ScopedEnv v("HEARTH_IMAGE_HOST_DECODING", "off");
    EXPECT_EQ(host_share_mode_from_env(&fraction), Mode::off);
  }
  {
    ScopedEnv v("HEARTH_IMAGE_HOST_DECODING", "0.25");
    EXPECT_EQ(host_share_mode_from_env(&fraction), Mode::fixed);
    EXPECT_DOUBLE_EQ(fraction, 0.25);
  }
  for (const char* bad : {"sometimes", "1.5", "-0.1", "0.5x"}) {
    ScopedEnv v("HEARTH_IMAGE_HOST_DECODING", bad);
    try {
      host_share_mode_from_env(&fraction);
      FAIL() << "no error for " << bad;
    } catch (const ValueError& e) {
      EXPECT_NE(std::string(e.what()).find("HEARTH_IMAGE_HOST_DECODING='" + std::string(bad) +
                                           "' is not allowed: expected off, auto or a fraction from 0 to 1"),
                std::string::npos)
          << e.what();
    }
  }
}

}  // namespace
}  // namespace hearth::backends
