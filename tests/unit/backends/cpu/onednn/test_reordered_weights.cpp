// Weights reordered into oneDNN's layouts are kept between calls
// (reordered_weights.h) and made again whenever the weight may have changed:
// an in-place write, or another tensor in the same memory.
#include <cstdint>
#include <vector>

#include <gtest/gtest.h>

#include "hearth/autograd/grad_mode.h"
#include "hearth/backends/cpu/onednn/onednn.h"
#include "hearth/core/generator.h"
#include "hearth/dispatch/cpu_reference.h"
#include "hearth/ops/elementwise.h"
#include "hearth/ops/factory.h"
#include "hearth/ops/nn_functional.h"
#include "tests/support/scoped_env.h"

namespace hearth {
namespace {

// oneDNN runs this NCHW 3x3 convolution of 16 channels on blocked weights.
Tensor forward(const Tensor& x, const Tensor& w) { return conv2d(x, w, Tensor(), {1, 1}, {1, 1}); }

Tensor reference_forward(const Tensor& x, const Tensor& w) {
  ForceCpuReference reference;
  return forward(x, w);
}

void expect_close(const Tensor& a, const Tensor& b) {
  const std::vector<float> av = a.contiguous().to_vector<float>(), bv = b.contiguous().to_vector<float>();
  ASSERT_EQ(av.size(), bv.size());
  for (size_t i = 0; i < av.size(); ++i) ASSERT_NEAR(av[i], bv[i], 1e-3) << "element " << i;
}

class OnednnReorderedWeights : public ::testing::Test {
 protected:
  void SetUp() override {
    const uint64_t before = cpu::onednn::calls_taken();
    forward(randn({1, 16, 5, 5}), randn({16, 16, 3, 3}));
    if (cpu::onednn::calls_taken() == before) GTEST_SKIP() << "oneDNN is not built here";
  }
  NoGradGuard no_grad_;
  testing::ScopedEnv off_{"HEARTH_CPU_REFERENCE", "0"};
  testing::ScopedEnv always_{"HEARTH_ONEDNN_ALWAYS", "1"};
};

// The first batch notes the weight, the second keeps its copy, the rest reuse it.
TEST_F(OnednnReorderedWeights, EvaluationReordersEachWeightTwice) {
  manual_seed(1);
  const Tensor w = randn({32, 16, 3, 3});
  const uint64_t reorders = cpu::onednn::weight_reorders(), saved = cpu::onednn::weight_reorders_saved();
  for (int batch = 0; batch < 5; ++batch) {
    const Tensor x = randn({2, 16, 9, 9});
    expect_close(forward(x, w), reference_forward(x, w));
  }
  EXPECT_EQ(cpu::onednn::weight_reorders() - reorders, 2u);
  EXPECT_EQ(cpu::onednn::weight_reorders_saved() - saved, 3u);
}

// Weights that change between every two reads (training) are never kept.
TEST_F(OnednnReorderedWeights, WeightsWrittenAfterEveryReadAreNeverReused) {
  manual_seed(4);
  const Tensor x = randn({2, 16, 9, 9});
  const Tensor w = randn({32, 16, 3, 3});
  const uint64_t reorders = cpu::onednn::weight_reorders(), saved = cpu::onednn::weight_reorders_saved();
  for (int step = 0; step < 4; ++step) {
    expect_close(forward(x, w), reference_forward(x, w));
    mul_(w, 0.5);
  }
  EXPECT_EQ(cpu::onednn::weight_reorders() - reorders, 4u);
  EXPECT_EQ(cpu::onednn::weight_reorders_saved() - saved, 0u);
}

TEST_F(OnednnReorderedWeights, AnInPlaceWriteReordersAgain) {
  manual_seed(2);
  const Tensor x = randn({2, 16, 9, 9});
  const Tensor w = randn({32, 16, 3, 3});
  forward(x, w);
  forward(x, w);  // kept from here
  const uint64_t reorders = cpu::onednn::weight_reorders();
  mul_(w, 2.0);  // as an optimizer step writes: in place, bumping the version
  expect_close(forward(x, w), reference_forward(x, w));
  EXPECT_EQ(cpu::onednn::weight_reorders() - reorders, 1u);
}

// Freed weights' memory goes to the next ones of the same size: a new tensor
// at an old one's address must never get the old one's copy.
TEST_F(OnednnReorderedWeights, NewWeightsAtAFreedWeightsAddressAreReorderedAfresh) {
  manual_seed(3);
  const Tensor x = randn({2, 16, 9, 9});
  for (int step = 0; step < 4; ++step) {
    const Tensor w = randn({32, 16, 3, 3});
    forward(x, w);  // kept from the second call
    expect_close(forward(x, w), reference_forward(x, w));
  }
}

}  // namespace
}  // namespace hearth
