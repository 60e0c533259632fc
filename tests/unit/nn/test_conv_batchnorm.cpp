#include <gtest/gtest.h>

#include "hearth/autograd/grad_mode.h"
#include "hearth/core/generator.h"
#include "hearth/nn/conv_batchnorm.h"
#include "hearth/ops/autocast.h"
#include "hearth/ops/elementwise.h"
#include "hearth/ops/factory.h"
#include "hearth/ops/nn_functional.h"
#include "hearth/ops/reduction.h"
#include "hearth/ops/view.h"
#include "tests/unit/nn/nn_testing.h"

namespace hearth {
namespace {

using nn::BatchNorm2d;
using nn::Conv2d;
using nn::ConvBatchNormFold;
using testing::expect_close;

// A conv and a batch norm whose running statistics and affine map are far
// from the identity, so a fold that dropped any of them would show.
struct Pair {
  Conv2d conv{3, 4, 3, /*stride=*/1, /*padding=*/1, 1, 1, /*bias=*/true};
  BatchNorm2d bn{4};
  Pair() {
    NoGradGuard no_grad;
    copy_(bn.running_mean, tensor({0.5f, -1.f, 2.f, 0.f}));
    copy_(bn.running_var, tensor({4.f, 0.25f, 1.f, 9.f}));
    copy_(bn.weight, tensor({1.5f, -0.5f, 2.f, 1.f}));
    copy_(bn.bias, tensor({0.1f, 0.2f, -0.3f, 0.4f}));
    bn.eval();
  }
  Tensor reference(const Tensor& x, bool relu, const Tensor& residual = Tensor()) {
    Tensor y = bn.forward(conv.forward(x));
    if (residual.defined()) y = add(y, residual);
    return relu ? hearth::relu(y) : y;
  }
};

TEST(NnConvBatchNormFold, InferenceFoldsTheBatchNormIntoTheConvolution) {
  manual_seed(11);
  Pair p;
  ConvBatchNormFold fold;
  const Tensor x = randn({2, 3, 6, 5}), r = randn({2, 4, 6, 5});
  NoGradGuard no_grad;
  EXPECT_TRUE(ConvBatchNormFold::folds(p.conv, p.bn));
  for (bool relu : {false, true}) expect_close(fold.forward(p.conv, p.bn, x, relu), p.reference(x, relu), 1e-5);
  expect_close(fold.forward(p.conv, p.bn, x, true, r), p.reference(x, true, r), 1e-5);
  // channels_last input: the folded weight follows the input's format.
  const Tensor xl = contiguous(x, MemoryFormat::channels_last);
  const Tensor yl = fold.forward(p.conv, p.bn, xl, true);
  EXPECT_TRUE(yl.is_contiguous(MemoryFormat::channels_last));
  expect_close(yl, p.reference(x, true), 1e-5);
}

TEST(NnConvBatchNormFold, AChangedSourceTensorIsFoldedAgain) {
  manual_seed(12);
  Pair p;
  ConvBatchNormFold fold;
  const Tensor x = randn({1, 3, 5, 5});
  NoGradGuard no_grad;
  const Tensor before = fold.forward(p.conv, p.bn, x, false);
  // An optimizer-style in-place update of each source, one at a time.
  for (Tensor* t : {&p.conv.weight, &p.conv.bias, &p.bn.weight, &p.bn.bias, &p.bn.running_mean, &p.bn.running_var}) {
    copy_(*t, add(*t, 0.25));
    expect_close(fold.forward(p.conv, p.bn, x, false), p.reference(x, false), 1e-5);
  }
  EXPECT_GT(amax(abs(sub(fold.forward(p.conv, p.bn, x, false), before))).item<double>(), 0.1);
  // A source replaced by another tensor (another storage, version 0 again).
  p.bn.running_mean = mul(randn({4}), 3.0);
  expect_close(fold.forward(p.conv, p.bn, x, false), p.reference(x, false), 1e-5);
}

TEST(NnConvBatchNormFold, TrainingOrRecordingGradientsRunsTheModulesUnfolded) {
  manual_seed(13);
  Pair p;
  ConvBatchNormFold fold;
  const Tensor x = randn({2, 3, 4, 4});
  // Gradients recorded: the composition itself (exactly), and gradients reach the parameters.
  EXPECT_FALSE(ConvBatchNormFold::folds(p.conv, p.bn));
  Tensor y = fold.forward(p.conv, p.bn, x, true);
  expect_close(y, p.reference(x, true), 0.0);
  sum(y).backward();
  EXPECT_TRUE(p.conv.weight.grad().defined());
  // Training: batch statistics, and the running ones move.
  p.bn.train();
  const Tensor running_before = p.bn.running_mean.clone();
  {
    NoGradGuard no_grad;
    EXPECT_FALSE(ConvBatchNormFold::folds(p.conv, p.bn));
    fold.forward(p.conv, p.bn, x, true);
  }
  EXPECT_GT(amax(abs(sub(p.bn.running_mean, running_before))).item<double>(), 0.0);
}

TEST(NnConvBatchNormFold, UnderAutocastTheFoldIsMadeInTheAutocastDtype) {
  manual_seed(14);
  Pair p;
  ConvBatchNormFold fold;
  const Tensor x = randn({2, 3, 6, 5});
  NoGradGuard no_grad;
  const Tensor reference = p.reference(x, true);
  AutocastGuard autocast(kCpu, DType::bfloat16);
  const Tensor y = fold.forward(p.conv, p.bn, x, true);
  EXPECT_EQ(y.dtype(), DType::bfloat16);
  // bfloat16 keeps 8 bits: a relative tolerance of a few units in the last place.
  const Tensor err = abs(sub(y.to(DType::float32), reference));
  EXPECT_LE(amax(sub(err, mul(abs(reference), 0.02))).item<double>(), 0.05);
}

}  // namespace
}  // namespace hearth
