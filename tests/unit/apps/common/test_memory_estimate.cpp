#include <gtest/gtest.h>

#include "apps/common/memory_estimate.h"
#include "hearth/core/errors.h"
#include "hearth/core/generator.h"
#include "hearth/nn/models/mlp.h"
#include "hearth/ops/factory.h"
#include "hearth/ops/nn_functional.h"
#include "hearth/optim/adam.h"

namespace hearth::cli {
namespace {

// An MLP's training step with AdamW, in the pieces the estimator measures.
struct MlpStep {
  MlpStep() {
    manual_seed(0);
    model = std::make_shared<nn::models::MLP>(64, std::vector<int64_t>{512, 512}, 10);
    optimizer = std::make_unique<optim::AdamW>(model->parameters(), optim::AdamWOptions{.lr = 1e-3});
    for (const Tensor& p : model->parameters()) parameters += p.numel();
  }
  TrainingStepProbe probe() {
    return {[this](int64_t n) {
              x = randn({n, 64}, DType::float32);
              y = randint(0, 10, {n}, DType::int64);
            },
            [this] {
              x = Tensor();
              y = Tensor();
            },
            [this] { return cross_entropy(model->forward(x), y); },
            [this] { optimizer->step(); },
            [this] { optimizer->zero_grad(); },
            parameters};
  }
  std::shared_ptr<nn::models::MLP> model;
  std::unique_ptr<optim::Optimizer> optimizer;
  Tensor x, y;
  int64_t parameters = 0;
};

TEST(MemoryEstimate, CountsParametersGradientsAndOptimizerState) {
  MlpStep step;
  MemoryEstimate e = estimate_training_memory(step.probe(), 256, "fp32");
  const double params = static_cast<double>(step.parameters) * 4;
  EXPECT_EQ(e.parameters, static_cast<size_t>(params));
  EXPECT_NEAR(static_cast<double>(e.gradients), params, params * 0.01);
  // AdamW: two moments per parameter (and a few bytes of step counters).
  EXPECT_NEAR(static_cast<double>(e.optimizer_state), 2 * params, params * 0.02);
  // The allocator rounds blocks to 64 bytes, which the tiny label tensors feel.
  EXPECT_NEAR(static_cast<double>(e.inputs), 256.0 * (64 * 4 + 8), 256.0 * 8);
  EXPECT_GT(e.activations_per_sample, 2 * 512 * 4);  // at least the two hidden layers' outputs
  EXPECT_EQ(e.total, e.parameters + e.gradients + e.optimizer_state + e.inputs + e.activations + e.temporaries);
}

TEST(MemoryEstimate, ScalingTwoSmallBatchesPredictsALargeOne) {
  MlpStep step;
  for (int64_t batch : {16, 128, 512}) {
    MemoryEstimate e = estimate_training_memory(step.probe(), batch, "fp32");
    create_gradients(step.probe());
    StepMeasurement real = measure_training_step(step.probe(), batch);
    EXPECT_NEAR(static_cast<double>(e.activations), static_cast<double>(real.saved), real.saved * 0.05)
        << "batch " << batch;
    const double predicted_peak = static_cast<double>(e.activations + e.temporaries);
    EXPECT_NEAR(predicted_peak, static_cast<double>(real.peak), real.peak * 0.10)
        << "batch " << batch << ": predicted " << predicted_peak << ", measured " << real.peak;
  }
}

TEST(MemoryEstimate, MixedPrecisionHalvesActivationsAndAddsWeightCopies) {
  MlpStep step;
  MemoryEstimate full = estimate_training_memory(step.probe(), 64, "fp32");
  MemoryEstimate half = estimate_training_memory(step.probe(), 64, "bf16-mixed");
  EXPECT_NEAR(static_cast<double>(half.activations), full.activations / 2.0, full.activations * 0.02 + 64);
  EXPECT_EQ(half.weight_copies, static_cast<size_t>(step.parameters) * 2);
  EXPECT_EQ(half.gradients, full.gradients);
  EXPECT_THROW(estimate_training_memory(step.probe(), 64, "fp8"), ValueError);
}

}  // namespace
}  // namespace hearth::cli
