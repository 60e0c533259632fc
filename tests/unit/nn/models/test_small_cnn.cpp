#include <gtest/gtest.h>

#include "hearth/core/generator.h"
#include "hearth/nn/models/small_cnn.h"
#include "hearth/ops/factory.h"
#include "hearth/ops/nn_functional.h"
#include "hearth/optim/adam.h"

namespace hearth {
namespace {

using nn::models::SmallCNN;

TEST(NnSmallCnn, LayoutAndNames) {
  SmallCNN cnn;
  std::vector<std::string> names;
  int64_t count = 0;
  for (const auto& [n, p] : cnn.named_parameters()) {
    names.push_back(n);
    count += p.numel();
  }
  EXPECT_EQ(names, (std::vector<std::string>{"features.0.weight", "features.0.bias", "features.1.weight",
                                             "features.1.bias", "features.4.weight", "features.4.bias",
                                             "features.5.weight", "features.5.bias", "classifier.1.weight",
                                             "classifier.1.bias", "classifier.4.weight", "classifier.4.bias"}));
  // conv 16*9+16, bn 32, conv 32*16*9+32, bn 64, fc 1568*128+128, fc 128*10+10.
  EXPECT_EQ(count, 160 + 32 + 4640 + 64 + 200832 + 1290);
  EXPECT_EQ(cnn.state_dict().count("features.1.running_mean"), 1u);
  EXPECT_EQ(cnn.state_dict().count("features.5.num_batches_tracked"), 1u);
}

TEST(NnSmallCnn, ForwardShapesAndConfig) {
  SmallCNN cnn;
  EXPECT_EQ(cnn.forward(zeros({2, 1, 28, 28})).shape(), (Shape{2, 10}));
  SmallCNN rgb({.in_channels = 3, .num_classes = 4, .image_size = 32, .channels1 = 4, .channels2 = 8, .hidden = 16});
  EXPECT_EQ(rgb.forward(zeros({2, 3, 32, 32})).shape(), (Shape{2, 4}));
  try {
    cnn.forward(zeros({2, 3, 28, 28}));
    FAIL() << "expected ShapeError";
  } catch (const ShapeError& e) {
    EXPECT_NE(std::string(e.what()).find("[N, 1, 28, 28]"), std::string::npos) << e.what();
  }
  EXPECT_THROW(SmallCNN({.image_size = 30}), ValueError);
}

TEST(NnSmallCnn, FitsASmallBatch) {
  manual_seed(3);
  SmallCNN cnn({.image_size = 12, .channels1 = 4, .channels2 = 8, .hidden = 32, .dropout = 0.0});
  Tensor x = randn({16, 1, 12, 12});
  Tensor y = randint(0, 10, {16});
  optim::Adam opt(cnn.parameters(), {.lr = 1e-2});
  double first = 0, last = 0;
  for (int step = 0; step < 25; ++step) {
    opt.zero_grad();
    Tensor loss = cross_entropy(cnn.forward(x), y);
    loss.backward();
    opt.step();
    (step == 0 ? first : last) = loss.item<double>();
  }
  EXPECT_LT(last, 0.5 * first) << "first " << first << " last " << last;
}

}  // namespace
}  // namespace hearth
