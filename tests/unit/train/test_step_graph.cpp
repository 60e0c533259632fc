// GraphedStep where the device has no step graphs (the CPU): every call runs
// the step eagerly, and the reason is given once the rehearsal would start.
#include "hearth/train/step_graph.h"

#include <gtest/gtest.h>

#include "hearth/core/errors.h"

namespace hearth::train {
namespace {

TEST(GraphedStep, OnTheCpuEveryCallRunsTheStepEagerly) {
  int runs = 0;
  GraphedStep step(Device(), [&] { ++runs; }, /*eager_calls=*/1);
  step();
  EXPECT_TRUE(step.fallback_reason().empty()) << "no verdict before the warm-up call has run";
  for (int i = 0; i < 4; ++i) step();
  EXPECT_EQ(runs, 5);
  EXPECT_FALSE(step.replaying());
  EXPECT_NE(step.fallback_reason().find("cpu has no step graphs"), std::string::npos) << step.fallback_reason();
}

TEST(GraphedStep, AStepThatThrowsPassesTheErrorOn) {
  GraphedStep step(Device(), [] { throw ValueError("bad batch"); }, 0);
  EXPECT_THROW(step(), ValueError);
}

}  // namespace
}  // namespace hearth::train
