// An OutOfMemoryError in the middle of a training step on the GPU leaves
// model, optimizer and checkpoints consistent: the CPU test's sweep of
// injected failures (tests/support/oom_step_check.h) with CUDA tensors, and a
// real out-of-memory under HEARTH_CUDA_MEMORY_FRACTION, where the optimizer's
// state no longer fits after the forward and backward did.
#include <cstdlib>

#include <gtest/gtest.h>

#include "hearth/core/device_runtime.h"
#include "hearth/nn/linear.h"
#include "hearth/train/trainer.h"
#include "tests/gpu/gpu_test_util.h"
#include "tests/support/oom_step_check.h"

namespace hearth::gpu_testing {
namespace {

using train::testing::check_oom_anywhere_in_a_step;

TEST(CudaOomStep, InjectedFailuresAnywhereInAStepLeaveTheRunConsistent) {
  HEARTH_REQUIRE_CUDA();
  // Every 4th allocation: a step of the fused optimizer and clipping allocates
  // a few dozen times, and the sweep must fail several of them.
  check_oom_anywhere_in_a_step("cuda:0", 4, 700);
}

// One Linear layer sized so that weights, gradients and activations fit the
// limit but AdamW's two state tensors per weight do not: the first
// optimizer step runs out of memory after the forward and backward succeeded.
TEST(CudaOomLimit, TheOptimizerStateNotFittingLeavesTheModelAsItWas) {
  HEARTH_REQUIRE_CUDA();
  if (!std::getenv("HEARTH_CUDA_MEMORY_FRACTION")) GTEST_SKIP() << "HEARTH_CUDA_MEMORY_FRACTION is not set";
  DeviceRuntime& rt = device_runtime(cuda0().kind);
  (void)empty({1}, DType::float32, cuda0());  // starts the pool, which reads the limit
  const size_t limit = rt.memory_stats(0).limit;
  ASSERT_GT(limit, 0u);
  const int64_t in = 1024;
  const int64_t out = static_cast<int64_t>(limit / 3 / (4 * in));  // weights: a third of the limit

  hearth::testing::TempDir dir;
  manual_seed(0);
  auto model = std::make_shared<nn::Linear>(in, out);
  manual_seed(1);
  Tensor x = randn({8, in});
  Tensor y = randint(0, out, {8});
  auto data = std::make_shared<data::TensorDataset>(
      data::Example::Map{{data::field::kPixelValues, x}, {data::field::kLabels, y}});
  train::TrainingArguments args = train::testing::toy_args(dir.file("run"));
  args.use_cpu = false;
  args.device = "cuda:0";
  args.max_steps = 1;
  args.save_strategy = "steps";
  args.save_steps = 1;
  std::vector<float> before = model->weight.cpu().to_vector<float>();
  train::Trainer t(model, args, data, nullptr, {}, train::testing::quiet());
  EXPECT_THROW(t.train(), OutOfMemoryError);
  EXPECT_EQ(t.state().global_step, 0);
  EXPECT_EQ(model->weight.cpu().to_vector<float>(), before) << "the weights changed in a step that failed";
  EXPECT_EQ(t.optimizer()->state(model->weight), nullptr) << "the optimizer kept state of a step that failed";
  EXPECT_FALSE(model->weight.grad().defined()) << "a stale gradient";
  EXPECT_TRUE(train::list_checkpoints(dir.file("run")).empty());
}

}  // namespace
}  // namespace hearth::gpu_testing
