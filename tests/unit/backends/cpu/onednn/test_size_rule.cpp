// Which convolution calls oneDNN takes by default (size_rule.h): none with
// under 16 input channels per group, and, while idle threads sleep
// (OMP_WAIT_POLICY=passive), none under 8M multiply-adds per thread;
// HEARTH_ONEDNN_ALWAYS=1 gives it every call it can take.
#include <cstdint>

#include <gtest/gtest.h>

#include "hearth/backends/cpu/onednn/onednn.h"
#include "hearth/backends/cpu/parallel.h"
#include "hearth/core/generator.h"
#include "hearth/ops/elementwise.h"
#include "hearth/ops/factory.h"
#include "hearth/ops/nn_functional.h"
#include "hearth/ops/reduction.h"
#include "tests/support/scoped_env.h"

namespace hearth {
namespace {

// The calls oneDNN took for one forward and backward of an NCHW 3x3
// convolution (both x and the weight require grad: three passes).
uint64_t passes_taken(int64_t n, int64_t c, int64_t o, int64_t hw) {
  manual_seed(4);
  const Tensor x = randn({n, c, hw, hw}).requires_grad_();
  const Tensor w = randn({o, c, 3, 3}).requires_grad_();
  const uint64_t before = cpu::onednn::calls_taken();
  sum(conv2d(x, w, Tensor(), {1, 1}, {1, 1})).backward();
  return cpu::onednn::calls_taken() - before;
}

// What oneDNN should have taken: nothing where it is not built.
uint64_t if_built(uint64_t taken) { return HEARTH_TEST_ONEDNN_BUILT ? taken : 0; }

// Of a taken NCHW 3x3 convolution's passes, oneDNN computes the forward and
// the backward-data; its blocked backward-weights would lose accuracy, so the
// reference computes that one (convolution.cpp).
constexpr uint64_t kNchw3x3Passes = 2;

class OnednnSizeRule : public ::testing::Test {
  testing::ScopedEnv off_{"HEARTH_CPU_REFERENCE", "0"};
  testing::ScopedEnv unset_{"HEARTH_ONEDNN_ALWAYS", "0"};
};

TEST_F(OnednnSizeRule, Under16InputChannelsStaysOnTheReference) {
  testing::ScopedEnv spin("OMP_WAIT_POLICY", "active");
  EXPECT_EQ(passes_taken(2, 3, 16, 12), 0u);
  EXPECT_EQ(passes_taken(2, 15, 16, 12), 0u);
  EXPECT_EQ(passes_taken(2, 16, 16, 12), if_built(kNchw3x3Passes));
}

TEST_F(OnednnSizeRule, GroupsCountTheirOwnInputChannels) {
  testing::ScopedEnv spin("OMP_WAIT_POLICY", "active");
  manual_seed(5);
  const uint64_t before = cpu::onednn::calls_taken();
  conv2d(randn({2, 32, 12, 12}), randn({32, 8, 3, 3}), Tensor(), {1, 1}, {1, 1}, {1, 1}, 4);
  EXPECT_EQ(cpu::onednn::calls_taken() - before, 0u) << "8 input channels per group";
  conv2d(randn({2, 32, 12, 12}), randn({32, 16, 3, 3}), Tensor(), {1, 1}, {1, 1}, {1, 1}, 2);
  EXPECT_EQ(cpu::onednn::calls_taken() - before, if_built(1));
}

TEST_F(OnednnSizeRule, SmallCallsStayOnTheReferenceWhileThreadsSleep) {
  {
    testing::ScopedEnv sleep("OMP_WAIT_POLICY", "PASSIVE");
    EXPECT_EQ(passes_taken(2, 16, 16, 12), 0u);
    // 28 x 28 x 32 x 16 x 9 = 3.6M multiply-adds an image: three images a
    // thread are past 8M a thread.
    EXPECT_EQ(passes_taken(3 * cpu::num_threads(), 16, 32, 28), if_built(kNchw3x3Passes));
    testing::ScopedEnv always("HEARTH_ONEDNN_ALWAYS", "1");
    EXPECT_EQ(passes_taken(2, 3, 16, 12), if_built(3)) << "3 channels: plain layouts, every pass";
  }
  testing::ScopedEnv spin("OMP_WAIT_POLICY", "active");
  EXPECT_EQ(passes_taken(2, 16, 16, 12), if_built(kNchw3x3Passes));
}

}  // namespace
}  // namespace hearth
