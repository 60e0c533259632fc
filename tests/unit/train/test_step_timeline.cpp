// StepTimeline: an epoch's device time and the device's idle time between
// steps, from timing events on a device whose clock the test moves.
#include <gtest/gtest.h>

#include <cstdlib>
#include <cstring>

#include "hearth/core/device_runtime.h"
#include "hearth/train/step_timeline.h"

namespace hearth::train {
namespace {

// Events carry the time the test's clock reads when they are recorded, as a
// device's queue would reach them.
class ClockRuntime final : public DeviceRuntime {
 public:
  struct Event final : TimingEvent {
    explicit Event(double t) : ms(t) {}
    double ms;
  };
  double now_ms = 0.0;
  bool is_available() const override { return true; }
  int device_count() const override { return 1; }
  std::string device_name(int) const override { return "timeline test device"; }
  int auto_priority() const override { return -1; }
  void* allocate(size_t nbytes, int) override { return std::malloc(nbytes ? nbytes : 1); }
  void deallocate(void* p, int) override { std::free(p); }
  void copy_from_host(void* d, const void* s, size_t n, int) override { std::memcpy(d, s, n); }
  void copy_to_host(void* d, const void* s, size_t n, int) override { std::memcpy(d, s, n); }
  void copy_within(void* d, const void* s, size_t n, int) override { std::memcpy(d, s, n); }
  std::shared_ptr<TimingEvent> record_timing_event(int) override { return std::make_shared<Event>(now_ms); }
  double elapsed_ms(const TimingEvent& a, const TimingEvent& b) override {
    return static_cast<const Event&>(b).ms - static_cast<const Event&>(a).ms;
  }
};

ClockRuntime& clock_device(Device* device) {
  static ClockRuntime* rt = nullptr;
  static DeviceKind kind = [] {
    DeviceKind k = register_device_kind("timelinedev");
    auto owned = std::make_unique<ClockRuntime>();
    rt = owned.get();
    register_device_runtime(k, std::move(owned));
    return k;
  }();
  *device = Device(kind, 0);
  rt->now_ms = 0.0;
  return *rt;
}

TEST(StepTimeline, AnEpochsDeviceTimeAndTheIdleGapsBetweenItsSteps) {
  Device dev;
  ClockRuntime& clock = clock_device(&dev);
  StepTimeline timeline(dev);
  ASSERT_TRUE(timeline.active());
  // Three steps of 10 ms; the device waits 2 ms before the second and 5 ms
  // before the third.
  const double starts[] = {0.0, 12.0, 27.0};
  for (double s : starts) {
    clock.now_ms = s;
    timeline.step_begins();
    clock.now_ms = s + 10.0;
    timeline.step_ends(128);
  }
  std::optional<EpochTiming> t = timeline.finish_epoch();
  ASSERT_TRUE(t.has_value());
  EXPECT_EQ(t->steps, 3);
  EXPECT_EQ(t->samples, 384);
  EXPECT_DOUBLE_EQ(t->seconds, 0.037);
  EXPECT_DOUBLE_EQ(t->idle_seconds, 0.007);
  EXPECT_NEAR(t->samples_per_second(), 384 / 0.037, 1e-6);
  EXPECT_NEAR(t->idle_share(), 7.0 / 37.0, 1e-12);
  // The next epoch starts empty.
  EXPECT_FALSE(timeline.finish_epoch().has_value());
}

TEST(StepTimeline, AStepThatNeverEndedIsLeftOutAndDiscardForgetsTheEpoch) {
  Device dev;
  ClockRuntime& clock = clock_device(&dev);
  StepTimeline timeline(dev);
  timeline.step_begins();
  clock.now_ms = 4.0;
  timeline.step_ends(8);
  clock.now_ms = 5.0;
  timeline.step_begins();  // fails before it ends
  std::optional<EpochTiming> t = timeline.finish_epoch();
  ASSERT_TRUE(t.has_value());
  EXPECT_EQ(t->steps, 1);
  EXPECT_EQ(t->samples, 8);
  EXPECT_DOUBLE_EQ(t->seconds, 0.004);
  EXPECT_DOUBLE_EQ(t->idle_seconds, 0.0);

  timeline.step_begins();
  timeline.step_ends(8);
  timeline.discard();
  EXPECT_FALSE(timeline.finish_epoch().has_value());
}

TEST(StepTimeline, TheCpuTimesNothing) {
  StepTimeline timeline{Device(kCpu)};
  EXPECT_FALSE(timeline.active());
  timeline.step_begins();
  timeline.step_ends(4);
  EXPECT_FALSE(timeline.finish_epoch().has_value());
}

TEST(StepTimeline, TheLineSaysTheStepsSamplesDeviceTimeRateAndIdleShare) {
  EpochTiming t;
  t.steps = 3;
  t.samples = 384;
  t.seconds = 0.037;
  t.idle_seconds = 0.007;
  t.host_wait_seconds = 0.25;
  EXPECT_EQ(timing_text(t, "evaluation steps"),
            "3 evaluation steps, 384 samples in 0.04 s of device time (10378 samples/s); the device idle 18.9% of it "
            "between steps (waiting for batches or for the host); the host waited 0.25 s for batches");
}

}  // namespace
}  // namespace hearth::train
