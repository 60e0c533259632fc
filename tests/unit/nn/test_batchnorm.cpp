#include <gtest/gtest.h>

#include "hearth/autograd/grad_mode.h"
#include "hearth/nn/batchnorm.h"
#include "hearth/ops/elementwise.h"
#include "hearth/ops/factory.h"
#include "hearth/ops/nn_functional.h"
#include "hearth/ops/reduction.h"
#include "tests/unit/nn/nn_testing.h"

namespace hearth {
namespace {

using nn::BatchNorm1d;
using nn::BatchNorm2d;
using testing::expect_close;

TEST(NnBatchNorm, StartsAtIdentityStatistics) {
  BatchNorm2d bn(3);
  EXPECT_EQ(bn.weight.to_vector<float>(), (std::vector<float>{1, 1, 1}));
  EXPECT_EQ(bn.bias.to_vector<float>(), (std::vector<float>{0, 0, 0}));
  EXPECT_EQ(bn.running_mean.to_vector<float>(), (std::vector<float>{0, 0, 0}));
  EXPECT_EQ(bn.running_var.to_vector<float>(), (std::vector<float>{1, 1, 1}));
  EXPECT_EQ(bn.num_batches_tracked.dtype(), DType::int64);
  EXPECT_EQ(bn.num_batches_tracked.item<int64_t>(), 0);
  EXPECT_EQ(bn.extra_repr(), "3, eps=1e-05, momentum=0.1, affine=true, track_running_stats=true");
}

TEST(NnBatchNorm, TrainingUsesBatchStatisticsAndUpdatesRunningOnes) {
  BatchNorm2d bn(2);
  Tensor x = add(mul(randn({4, 2, 3, 3}, DType::float32), 3.0), 2.0);
  Tensor y = bn.forward(x);
  // Same as the functional op with batch statistics.
  Tensor rm = zeros({2}), rv = ones({2});
  expect_close(y, batch_norm(x, rm, rv, bn.weight, bn.bias, true, 0.1, 1e-5), 0);
  expect_close(bn.running_mean, rm, 0);
  expect_close(bn.running_var, rv, 0);
  // running = 0.9 * init + 0.1 * batch (unbiased variance).
  expect_close(bn.running_mean, mul(mean(x, {0, 2, 3}), 0.1), 1e-6);
  expect_close(bn.running_var, add(mul(var(x, {0, 2, 3}), 0.1), 0.9), 1e-5);
  EXPECT_EQ(bn.num_batches_tracked.item<int64_t>(), 1);
  bn.forward(x);
  EXPECT_EQ(bn.num_batches_tracked.item<int64_t>(), 2);
}

TEST(NnBatchNorm, EvalUsesRunningStatisticsAndLeavesThem) {
  BatchNorm2d bn(2);
  bn.forward(randn({4, 2, 2, 2}));
  bn.eval();
  const std::vector<float> rm = bn.running_mean.to_vector<float>();
  Tensor x = randn({3, 2, 2, 2});
  Tensor y = bn.forward(x);
  expect_close(y, batch_norm(x, bn.running_mean, bn.running_var, bn.weight, bn.bias, false), 0);
  EXPECT_EQ(bn.running_mean.to_vector<float>(), rm);
  EXPECT_EQ(bn.num_batches_tracked.item<int64_t>(), 1);
  // A single sample works in eval mode (no batch statistics needed).
  EXPECT_EQ(bn.forward(randn({1, 2, 1, 1})).shape(), (Shape{1, 2, 1, 1}));
}

TEST(NnBatchNorm, CumulativeAverageWithoutMomentum) {
  BatchNorm1d bn(1, 1e-5, std::nullopt);
  Tensor a = tensor({1.0f, 3.0f}).view({2, 1}), b = tensor({5.0f, 7.0f}).view({2, 1});
  bn.forward(a);  // factor 1: running_mean = 2
  EXPECT_FLOAT_EQ(bn.running_mean.item<float>(), 2.0f);
  bn.forward(b);  // factor 1/2: running_mean = (2 + 6) / 2
  EXPECT_FLOAT_EQ(bn.running_mean.item<float>(), 4.0f);
  EXPECT_EQ(bn.extra_repr(), "1, eps=1e-05, momentum=None, affine=true, track_running_stats=true");
}

TEST(NnBatchNorm, WithoutRunningStatsOrAffine) {
  BatchNorm1d bn(3, 1e-5, 0.1, /*affine=*/false, /*track_running_stats=*/false);
  EXPECT_TRUE(bn.parameters().empty());
  EXPECT_TRUE(bn.buffers().empty());
  EXPECT_TRUE(bn.state_dict().empty());
  bn.eval();  // still normalises with the batch's statistics
  Tensor x = randn({5, 3, 4});
  expect_close(bn.forward(x), batch_norm(x, Tensor(), Tensor(), Tensor(), Tensor(), true), 0);
}

TEST(NnBatchNorm, OneDimensionalInputsAndBackward) {
  BatchNorm1d bn(4);
  Tensor x = randn({8, 4});
  x.requires_grad_(true);
  Tensor y = bn.forward(x);
  expect_close(mean(y, {0}), zeros({4}), 1e-6);
  sum(mul(y, y)).backward();
  EXPECT_TRUE(x.grad().defined());
  EXPECT_EQ(bn.weight.grad().shape(), (Shape{4}));
  EXPECT_EQ(bn.bias.grad().shape(), (Shape{4}));
  EXPECT_EQ(bn.forward(randn({8, 4, 6})).shape(), (Shape{8, 4, 6}));
}

// forward_add_relu is relu(forward(x) + residual): the same output, running
// statistics and count, training and eval.
TEST(NnBatchNorm, ForwardAddReluIsReluOfForwardPlusResidual) {
  BatchNorm2d fused(3), plain(3);
  for (BatchNorm2d* bn : {&fused, &plain}) {
    NoGradGuard no_grad;
    copy_(bn->weight, tensor({0.5f, 1.5f, -1.0f}));
    copy_(bn->bias, tensor({0.1f, -0.2f, 0.3f}));
  }
  for (bool training : {true, false}) {
    fused.train(training);
    plain.train(training);
    Tensor x = add(mul(randn({4, 3, 3, 2}), 2.0), 1.0), r = randn({4, 3, 3, 2});
    Tensor y = fused.forward_add_relu(x, r);
    expect_close(y, relu(add(plain.forward(x), r)), 0);
    expect_close(fused.running_mean, plain.running_mean, 0);
    expect_close(fused.running_var, plain.running_var, 0);
    EXPECT_EQ(fused.num_batches_tracked.item<int64_t>(), plain.num_batches_tracked.item<int64_t>());
    // Some outputs clipped, some not: the ReLU and the add are both visible.
    const double positive = sum(gt(y, 0.0)).item<double>();
    EXPECT_GT(positive, 0);
    EXPECT_LT(positive, static_cast<double>(y.numel()));
  }
  EXPECT_THROW(fused.forward_add_relu(randn({4, 3, 3, 2}), Tensor()), ValueError);
  EXPECT_THROW(fused.forward_add_relu(randn({4, 3, 3, 2}), randn({4, 3, 2, 3})), ShapeError);
}

// With a momentum the batch norm's own kernel counts the batch; without one
// (the cumulative average) the count is made on the host first. Either way
// every training forward, fused or not, counts once and evaluation does not.
TEST(NnBatchNorm, CountsTrainingBatchesInEveryForm) {
  for (const bool cumulative : {false, true}) {
    BatchNorm2d bn(3, 1e-5, cumulative ? std::nullopt : std::optional<double>(0.1));
    const Tensor x = randn({2, 3, 4, 4}), r = randn({2, 3, 4, 4});
    bn.forward(x);
    bn.forward_relu(x);
    bn.forward_add_relu(x, r);
    EXPECT_EQ(bn.num_batches_tracked.item<int64_t>(), 3) << cumulative;
    bn.eval();
    bn.forward(x);
    EXPECT_EQ(bn.num_batches_tracked.item<int64_t>(), 3) << cumulative;
  }
}

TEST(NnBatchNorm, FunctionalStepCounter) {
  const Tensor x = randn({4, 2, 3});
  Tensor counter = full({}, 41, DType::int64);
  const uint32_t v = counter.version();
  const Tensor y = batch_norm(x, Tensor(), Tensor(), Tensor(), Tensor(), true, 0.1, 1e-5, counter);
  EXPECT_EQ(counter.item<int64_t>(), 42);
  EXPECT_GT(counter.version(), v);
  // The counter changes nothing else.
  expect_close(y, batch_norm(x, Tensor(), Tensor(), Tensor(), Tensor(), true), 0.0);
  // Evaluation leaves it.
  batch_norm(x, zeros({2}), ones({2}), Tensor(), Tensor(), false, 0.1, 1e-5, counter);
  EXPECT_EQ(counter.item<int64_t>(), 42);
  // No channels: nothing to normalise, still one batch.
  batch_norm(zeros({4, 0, 3}), Tensor(), Tensor(), Tensor(), Tensor(), true, 0.1, 1e-5, counter);
  EXPECT_EQ(counter.item<int64_t>(), 43);
  try {
    batch_norm(x, Tensor(), Tensor(), Tensor(), Tensor(), true, 0.1, 1e-5, full({}, 1.0, DType::float32));
    FAIL() << "expected TypeError";
  } catch (const TypeError& e) {
    EXPECT_TRUE(testing::contains(e.what(), "num_batches_tracked")) << e.what();
  }
  EXPECT_THROW(batch_norm(x, Tensor(), Tensor(), Tensor(), Tensor(), true, 0.1, 1e-5, zeros({2}, DType::int64)),
               TypeError);
}

TEST(NnBatchNorm, BadInputs) {
  BatchNorm2d bn2(3);
  try {
    bn2.forward(zeros({2, 3, 4}));
    FAIL() << "expected ShapeError";
  } catch (const ShapeError& e) {
    EXPECT_TRUE(testing::contains(e.what(), "[BatchNorm2d]")) << e.what();
    EXPECT_TRUE(testing::contains(e.what(), "4-D")) << e.what();
  }
  EXPECT_THROW(bn2.forward(zeros({2, 4, 2, 2})), ShapeError);  // 4 channels, 3 expected
  BatchNorm1d bn1(3);
  EXPECT_THROW(bn1.forward(zeros({2, 3, 4, 5})), ShapeError);
  EXPECT_THROW(bn1.forward(zeros({1, 3})), ValueError);  // one value per channel while training
  EXPECT_THROW(BatchNorm2d(0), ValueError);
  // The count must not move when the forward fails.
  EXPECT_EQ(bn2.num_batches_tracked.item<int64_t>(), 0);
}

}  // namespace
}  // namespace hearth
