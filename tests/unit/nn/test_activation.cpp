#include <gtest/gtest.h>

#include "hearth/nn/activation.h"
#include "hearth/ops/elementwise.h"
#include "hearth/ops/factory.h"
#include "tests/unit/nn/nn_testing.h"

namespace hearth {
namespace {

using testing::expect_close;

TEST(NnActivation, ModulesMatchTheFunctionalOps) {
  Tensor x = randn({3, 5});
  expect_close(nn::ReLU().forward(x), relu(x), 0);
  expect_close(nn::Tanh().forward(x), tanh(x), 0);
  expect_close(nn::GELU().forward(x), gelu(x), 0);
  expect_close(nn::GELU("tanh").forward(x), gelu(x, "tanh"), 0);
  EXPECT_EQ(nn::GELU("tanh").extra_repr(), "approximate='tanh'");
  EXPECT_EQ(nn::ReLU().repr(), "ReLU()");
  EXPECT_TRUE(nn::GELU().parameters().empty());
}

TEST(NnActivation, ValuesByHand) {
  Tensor x = tensor({-2.0f, 0.0f, 1.5f});
  expect_close(nn::ReLU().forward(x), tensor({0.0f, 0.0f, 1.5f}), 0);
  // GELU(x) = x * Phi(x): Phi(1.5) = 0.9331928.
  EXPECT_NEAR(nn::GELU().forward(x).to_vector<double>()[2], 1.5 * 0.9331927987311419, 1e-6);
  EXPECT_THROW(nn::GELU("sigmoid"), ValueError);
}

}  // namespace
}  // namespace hearth
