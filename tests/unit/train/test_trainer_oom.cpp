// An OutOfMemoryError anywhere in a training step (forward, backward, gradient
// clipping, the optimizer's state, the checkpoint after it) leaves model,
// optimizer and checkpoints consistent: either the step completed, or it is
// as if it never started. The failure is injected into the allocator after N
// allocations, for N across a whole step; on a GPU the same test runs with a
// real device limit (tests/gpu, HEARTH_CUDA_MEMORY_FRACTION).
#include <gtest/gtest.h>

#include "hearth/core/errors.h"
#include "hearth/core/oom_injection.h"
#include "hearth/optim/adam.h"
#include "tests/support/oom_step_check.h"

namespace hearth::train {
namespace {

using testing::check_oom_anywhere_in_a_step;
using testing::DisarmOom;

TEST(TrainerOom, AFailureAnywhereInAStepLeavesTheRunConsistentAndResumable) {
  // A step of this run makes a few hundred allocations; every 7th point of
  // failure across two steps' worth covers forward, backward, clipping, the
  // optimizer, logging and the save.
  check_oom_anywhere_in_a_step("cpu", 7, 700);
}

TEST(TrainerOom, AnOptimizerStepThatRunsOutOfMemoryChangesNothing) {
  // Two groups: the second group's state is allocated after the first's; a
  // failure there must not leave the first group updated.
  manual_seed(3);
  Tensor a = randn({4, 3}).requires_grad_(), b = randn({3}).requires_grad_();
  optim::AdamW opt({optim::ParamGroup{{a}, {}}, optim::ParamGroup{{b}, {{"weight_decay", 0.0}}}}, {});
  a.set_grad(ones({4, 3}));
  b.set_grad(ones({3}));
  const std::vector<float> a0 = a.to_vector<float>(), b0 = b.to_vector<float>();
  for (int64_t n = 0; n < 3; ++n) {
    DisarmOom disarm;
    inject_oom_after_allocations(n);
    EXPECT_THROW(opt.step(), OutOfMemoryError) << "n=" << n;
    EXPECT_EQ(a.to_vector<float>(), a0) << "n=" << n;
    EXPECT_EQ(b.to_vector<float>(), b0) << "n=" << n;
    EXPECT_EQ(opt.state(a), nullptr) << "n=" << n;
    EXPECT_EQ(opt.state(b), nullptr) << "n=" << n;
  }
  opt.step();
  ASSERT_NE(opt.state(a), nullptr);
  EXPECT_EQ(opt.state(a)->step, 1);
  EXPECT_NE(a.to_vector<float>(), a0);
}

TEST(TrainerOom, TheInjectedFailureFiresOnceAndNamesItself) {
  DisarmOom disarm;
  inject_oom_after_allocations(1);
  EXPECT_TRUE(oom_injection_armed());
  Tensor first = zeros({2});
  try {
    Tensor second = zeros({2});
    FAIL() << "the second allocation did not fail";
  } catch (const OutOfMemoryError& e) {
    EXPECT_NE(std::string(e.what()).find("injected"), std::string::npos) << e.what();
  }
  EXPECT_FALSE(oom_injection_armed());
  Tensor third = zeros({2});
}

}  // namespace
}  // namespace hearth::train
