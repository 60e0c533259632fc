// The host's share of a device-decoded batch (decode_share_controller.h),
// against simulated decoders: the host makes an image in c_h seconds, the
// device decodes one in c_d, and the worker waits W = max(0, D - H) for the
// device after making its part.
#include <stdlib.h>

#include <algorithm>
#include <cmath>
#include <deque>
#include <random>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "hearth/core/decode_share_controller.h"
#include "hearth/core/errors.h"

namespace hearth {
namespace {

using Controller = DecodeShareController;

struct SimulatedDecoders {
  double host_cost = 3e-3;      // c_h, seconds per image
  double device_cost = 1.3e-3;  // c_d
  int64_t batch = 128;
  int64_t always_on_host = 0;  // images the device cannot take (first of the batch)
  double jitter = 0.0;         // +- this part on each of H and D
  std::mt19937 rng{1234};

  double balance() const { return device_cost / (host_cost + device_cost); }

  double noisy(double seconds) {
    if (jitter == 0.0) return seconds;
    std::uniform_real_distribution<double> u(1.0 - jitter, 1.0 + jitter);
    return seconds * u(rng);
  }

  Controller::Measurement run(const Controller::Plan& p) {
    const int64_t on_host = p.host_images + always_on_host;
    const int64_t on_device = batch - on_host;
    Controller::Measurement m;
    m.host_seconds = noisy(host_cost * static_cast<double>(on_host));
    const double device_seconds = noisy(device_cost * static_cast<double>(on_device));
    m.wait_seconds = std::max(0.0, device_seconds - m.host_seconds);
    m.host_images = on_host;
    m.device_images = on_device;
    return m;
  }

  Controller::Plan plan(const Controller& c) const { return c.plan(batch, batch - always_on_host); }

  // One worker: each batch planned and reported before the next. Returns the
  // share after each batch.
  std::vector<double> one_worker(Controller& c, int batches) {
    std::vector<double> shares;
    for (int i = 0; i < batches; ++i) {
      const Controller::Plan p = plan(c);
      c.report(p, run(p));
      shares.push_back(c.share());
    }
    return shares;
  }

  // `workers` batches in flight: each reported `workers` batches after it was planned.
  std::vector<double> many_workers(Controller& c, int batches, int workers) {
    std::vector<double> shares;
    std::deque<Controller::Plan> in_flight;
    for (int i = 0; i < batches; ++i) {
      in_flight.push_back(plan(c));
      if (static_cast<int>(in_flight.size()) < workers) continue;
      const Controller::Plan p = in_flight.front();
      in_flight.pop_front();
      c.report(p, run(p));
      shares.push_back(c.share());
    }
    return shares;
  }
};

double lowest(const std::vector<double>& v, size_t from) { return *std::min_element(v.begin() + from, v.end()); }
double highest(const std::vector<double>& v, size_t from) { return *std::max_element(v.begin() + from, v.end()); }

constexpr double kStep = 1.0 / 64;

TEST(DecodeShareController, StartsAtZero) {
  Controller c;
  EXPECT_TRUE(c.adaptive());
  EXPECT_EQ(c.share(), 0.0);
  EXPECT_EQ(c.plan(128, 128).host_images, 0);
  EXPECT_EQ(c.describe(), "adaptive, now 0%");
}

TEST(DecodeShareController, ConvergesToTheBalancePoint) {
  SimulatedDecoders sim;
  Controller c;
  const std::vector<double> shares = sim.one_worker(c, 400);
  // Within a step or two of the balance, and settled there.
  EXPECT_NEAR(shares.back(), sim.balance(), 2 * kStep);
  EXPECT_GE(lowest(shares, 200), sim.balance() - 2 * kStep);
  EXPECT_LE(highest(shares, 200), sim.balance() + 2 * kStep);
  // Quickly: a raise covers half the distance.
  const auto near =
      std::find_if(shares.begin(), shares.end(), [&](double s) { return std::abs(s - sim.balance()) <= 2 * kStep; });
  EXPECT_LT(near - shares.begin(), 40);
}

TEST(DecodeShareController, ConvergesForOtherBalances) {
  for (const double device_cost : {0.3e-3, 0.8e-3, 2e-3}) {
    SimulatedDecoders sim;
    sim.device_cost = device_cost;
    Controller c;
    const std::vector<double> shares = sim.one_worker(c, 400);
    EXPECT_GE(lowest(shares, 200), sim.balance() - 2 * kStep) << device_cost;
    EXPECT_LE(highest(shares, 200), sim.balance() + 2 * kStep) << device_cost;
  }
}

TEST(DecodeShareController, ConvergesWithManyBatchesInFlight) {
  SimulatedDecoders sim;
  Controller c;
  const std::vector<double> shares = sim.many_workers(c, 800, 8);
  EXPECT_GE(lowest(shares, 400), sim.balance() - 2 * kStep);
  EXPECT_LE(highest(shares, 400), sim.balance() + 2 * kStep);
}

TEST(DecodeShareController, StaysAtZeroWhenTheDeviceIsAlwaysFaster) {
  // The device decodes a whole batch faster than the host makes one step's images.
  SimulatedDecoders sim;
  sim.device_cost = sim.host_cost / 100;
  Controller c;
  const std::vector<double> shares = sim.one_worker(c, 300);
  // One probe to learn the host's cost, then back to 0 for good.
  EXPECT_LE(highest(shares, 0), kStep);
  EXPECT_EQ(lowest(shares, 20), 0.0);
  EXPECT_EQ(highest(shares, 20), 0.0);
  EXPECT_EQ(c.plan(128, 128).host_images, 0);
}

TEST(DecodeShareController, NoProbeWhenTheHostsCostIsKnown) {
  // A batch with an image the device cannot take tells the host's cost at once.
  SimulatedDecoders sim;
  sim.device_cost = sim.host_cost / 100;
  sim.always_on_host = 1;
  Controller c;
  const std::vector<double> shares = sim.one_worker(c, 300);
  EXPECT_EQ(highest(shares, 0), 0.0);
}

TEST(DecodeShareController, StaysWithinTheCapWhenTheHostIsAlwaysFaster) {
  SimulatedDecoders sim;
  sim.host_cost = sim.device_cost / 100;
  Controller c;
  const std::vector<double> shares = sim.one_worker(c, 300);
  EXPECT_LE(highest(shares, 0), 0.5);
  EXPECT_EQ(shares.back(), 0.5);
  EXPECT_EQ(c.plan(128, 128).host_images, 64);
  // Never more than the images the device could take.
  EXPECT_EQ(c.plan(128, 10).host_images, 10);

  Controller::Options o;
  o.cap = 0.25;
  Controller capped({}, o);
  EXPECT_LE(highest(sim.many_workers(capped, 300, 4), 0), 0.25);
  EXPECT_EQ(capped.share(), 0.25);
}

TEST(DecodeShareController, NotThrownAroundByNoise) {
  for (const int workers : {1, 8}) {
    SimulatedDecoders sim;
    sim.jitter = 0.2;
    Controller c;
    const std::vector<double> shares = workers == 1 ? sim.one_worker(c, 3000) : sim.many_workers(c, 3000, workers);
    EXPECT_GE(lowest(shares, 500), sim.balance() - 4 * kStep) << workers << " workers";
    EXPECT_LE(highest(shares, 500), sim.balance() + 4 * kStep) << workers << " workers";
    double mean = 0.0;
    for (size_t i = 500; i < shares.size(); ++i) mean += shares[i];
    mean /= static_cast<double>(shares.size() - 500);
    EXPECT_NEAR(mean, sim.balance(), 2 * kStep) << workers << " workers";
  }
}

TEST(DecodeShareController, FollowsAChangeOfPace) {
  // The device slows down (the training steps start), then speeds up again.
  SimulatedDecoders sim;
  sim.device_cost = 0.3e-3;
  Controller c;
  sim.one_worker(c, 300);
  EXPECT_NEAR(c.share(), sim.balance(), 2 * kStep);
  sim.device_cost = 2e-3;
  sim.one_worker(c, 300);
  EXPECT_NEAR(c.share(), sim.balance(), 2 * kStep);
  sim.device_cost = 0.3e-3;
  sim.one_worker(c, 300);
  EXPECT_NEAR(c.share(), sim.balance(), 2 * kStep);
}

TEST(DecodeShareController, AFixedShareDoesNotMove) {
  for (const double fixed : {0.0, 0.25, 1.0}) {
    SimulatedDecoders sim;
    Controller c(ImageHostShareSetting{false, fixed});
    EXPECT_FALSE(c.adaptive());
    sim.one_worker(c, 100);
    EXPECT_EQ(c.share(), fixed);
    EXPECT_EQ(c.plan(128, 128).host_images, static_cast<int64_t>(fixed * 128));
  }
  EXPECT_EQ(Controller(ImageHostShareSetting{false, 0.25}).describe(), "fixed at 25%");
}

void expect_rejected(const std::string& value) {
  try {
    (void)parse_image_host_share(value);
    ADD_FAILURE() << "accepted \"" << value << "\"";
  } catch (const ValueError& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find("HEARTH_IMAGE_HOST_SHARE must be auto or a number from 0 to 1"), std::string::npos) << what;
    EXPECT_NE(what.find("got \"" + value + "\""), std::string::npos) << what;
  }
}

TEST(DecodeShareController, ParsesTheSetting) {
  EXPECT_TRUE(parse_image_host_share("").adaptive);
  EXPECT_TRUE(parse_image_host_share("auto").adaptive);
  for (const auto& [text, value] : std::vector<std::pair<std::string, double>>{
           {"0", 0.0}, {"0.25", 0.25}, {"1", 1.0}, {".5", 0.5}, {"1e-1", 0.1}}) {
    const ImageHostShareSetting s = parse_image_host_share(text);
    EXPECT_FALSE(s.adaptive) << text;
    EXPECT_DOUBLE_EQ(s.fixed, value) << text;
  }
  for (const char* bad : {"-0.1", "1.5", "abc", "0.5x", " 0.5", "nan", "inf", "Auto", "50%"}) expect_rejected(bad);
}

TEST(DecodeShareController, ReadsTheVariable) {
  const char* saved = std::getenv("HEARTH_IMAGE_HOST_SHARE");
  const std::string old = saved != nullptr ? saved : "";
  ::unsetenv("HEARTH_IMAGE_HOST_SHARE");
  EXPECT_TRUE(image_host_share_from_env().adaptive);
  ::setenv("HEARTH_IMAGE_HOST_SHARE", "0", 1);
  EXPECT_FALSE(image_host_share_from_env().adaptive);
  EXPECT_EQ(image_host_share_from_env().fixed, 0.0);
  ::setenv("HEARTH_IMAGE_HOST_SHARE", "2", 1);
  EXPECT_THROW(image_host_share_from_env(), ValueError);
  if (saved != nullptr)
    ::setenv("HEARTH_IMAGE_HOST_SHARE", old.c_str(), 1);
  else
    ::unsetenv("HEARTH_IMAGE_HOST_SHARE");
}

}  // namespace
}  // namespace hearth
