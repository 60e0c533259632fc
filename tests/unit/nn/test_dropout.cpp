#include <gtest/gtest.h>

#include "hearth/core/generator.h"
#include "hearth/nn/container.h"
#include "hearth/nn/dropout.h"
#include "hearth/ops/elementwise.h"
#include "hearth/ops/factory.h"
#include "hearth/ops/reduction.h"
#include "tests/unit/nn/nn_testing.h"

namespace hearth {
namespace {

using nn::Dropout;

TEST(NnDropout, TrainingZeroesAboutPAndScalesTheRest) {
  manual_seed(0);
  Dropout drop(0.25);
  EXPECT_TRUE(drop.is_training());
  Tensor x = ones({100000});
  std::vector<float> y = drop.forward(x).to_vector<float>();
  int64_t zeros_seen = 0;
  for (float v : y) {
    if (v == 0.0f)
      ++zeros_seen;
    else
      EXPECT_FLOAT_EQ(v, 1.0f / 0.75f);
  }
  EXPECT_NEAR(static_cast<double>(zeros_seen) / y.size(), 0.25, 0.01);
  EXPECT_EQ(drop.extra_repr(), "p=0.25");
}

TEST(NnDropout, EvalIsTheIdentityAndFollowsTheParent) {
  auto seq = std::make_shared<nn::Sequential>(std::make_shared<Dropout>(0.5));
  Tensor x = randn({64});
  seq->eval();
  testing::expect_close(seq->forward(x), x, 0);
  seq->train();
  EXPECT_GT(sum(eq(seq->forward(x), 0.0)).item<int64_t>(), 0);
}

TEST(NnDropout, EdgeProbabilities) {
  Tensor x = randn({16});
  testing::expect_close(Dropout(0.0).forward(x), x, 0);
  testing::expect_close(Dropout(1.0).forward(x), zeros({16}), 0);
  EXPECT_THROW(Dropout(1.5), ValueError);
  EXPECT_THROW(Dropout(-0.1), ValueError);
}

}  // namespace
}  // namespace hearth
