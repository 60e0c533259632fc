// The umbrella header compiles on its own and is enough for a small program.
#include "hearth/hearth.h"

#include <gtest/gtest.h>

namespace {

TEST(UmbrellaHeader, IsEnoughToTrainAStep) {
  using namespace hearth;
  manual_seed(0);
  auto model = std::make_shared<nn::models::MLP>(4, std::vector<int64_t>{8}, 3);
  Tensor x = randn({5, 4});
  Tensor y = tensor(std::vector<int64_t>{0, 1, 2, 0, 1});
  Tensor loss = cross_entropy(model->forward(x), y);
  loss.backward();
  EXPECT_TRUE(model->parameters()[0].grad().defined());
}

}  // namespace
