#include <cmath>

#include <gtest/gtest.h>

#include "hearth/core/generator.h"
#include "hearth/nn/models/resnet.h"
#include "hearth/ops/factory.h"
#include "tests/unit/nn/models/fold_testing.h"
#include "tests/unit/nn/models/torchvision_keys.h"
#include "tests/unit/nn/nn_testing.h"

namespace hearth {
namespace {

using nn::models::ResNet;
using nn::models::ResNetBlock;
using nn::models::ResNetConfig;

ResNetConfig tiny(ResNetBlock block) {
  ResNetConfig c;
  c.block = block;
  c.layers = {1, 1, 1, 1};
  c.base_width = 4;
  c.num_classes = 5;
  return c;
}

TEST(NnResnet, Resnet18MatchesTorchvision) {
  testing::expect_torchvision_layout("resnet18", 11689512, [] { return nn::models::resnet18(); });
}
TEST(NnResnet, Resnet34MatchesTorchvision) {
  testing::expect_torchvision_layout("resnet34", 21797672, [] { return nn::models::resnet34(); });
}
TEST(NnResnet, Resnet50MatchesTorchvision) {
  testing::expect_torchvision_layout("resnet50", 25557032, [] { return nn::models::resnet50(); });
}

TEST(NnResnet, ForwardShapes) {
  manual_seed(0);
  ResNet basic(tiny(ResNetBlock::basic));
  EXPECT_EQ(basic.forward(randn({2, 3, 32, 32})).shape(), (Shape{2, 5}));
  // Any size the stem and four stride-2 stages reduce to at least 1x1.
  EXPECT_EQ(basic.forward(randn({2, 3, 17, 23})).shape(), (Shape{2, 5}));
  ResNet bottleneck(tiny(ResNetBlock::bottleneck));
  EXPECT_EQ(bottleneck.forward(randn({2, 3, 32, 32})).shape(), (Shape{2, 5}));
  EXPECT_EQ(bottleneck.fc->in_features, 4 * 8 * 4);  // base 4, last stage 8x, expansion 4

  ResNetConfig grey = tiny(ResNetBlock::basic);
  grey.in_channels = 1;
  EXPECT_EQ(ResNet(grey).forward(randn({3, 1, 28, 28})).shape(), (Shape{3, 5}));
}

TEST(NnResnet, InferenceFoldsEachBatchNormIntoItsConvolution) {
  for (ResNetBlock block : {ResNetBlock::basic, ResNetBlock::bottleneck}) {
    manual_seed(21);
    ResNet model(tiny(block));
    testing::expect_folded_inference_matches(model, randn({2, 3, 32, 32}));
  }
}

TEST(NnResnet, ShortcutProjectionsWhereTheShapeChanges) {
  ResNet basic(tiny(ResNetBlock::basic));
  const auto sd = basic.state_dict();
  EXPECT_EQ(sd.count("layer1.0.downsample.0.weight"), 0u);  // same channels, stride 1: identity
  EXPECT_EQ(sd.at("layer2.0.downsample.0.weight").shape(), (Shape{8, 4, 1, 1}));
  EXPECT_EQ(sd.count("layer2.0.downsample.1.running_var"), 1u);
  ResNet bottleneck(tiny(ResNetBlock::bottleneck));
  // The first Bottleneck widens 4 -> 16 channels, so even stage 1 projects.
  EXPECT_EQ(bottleneck.state_dict().at("layer1.0.downsample.0.weight").shape(), (Shape{16, 4, 1, 1}));
  EXPECT_EQ(bottleneck.state_dict().at("layer2.0.conv2.weight").shape(), (Shape{8, 8, 3, 3}));
  EXPECT_EQ(bottleneck.layer2->at<nn::models::Bottleneck>(0)->conv2->stride, (Pair{2, 2}));
  EXPECT_EQ(bottleneck.layer2->at<nn::models::Bottleneck>(0)->conv1->stride, (Pair{1, 1}));
}

TEST(NnResnet, TorchvisionInitialisation) {
  manual_seed(1);
  ResNetConfig c = tiny(ResNetBlock::basic);
  c.base_width = 32;
  ResNet net(c);
  // kaiming_normal_(fan_out, relu): std sqrt(2 / (out * kH * kW)).
  const Tensor w = net.layer3->at<nn::models::BasicBlock>(0)->conv2->weight;  // [128, 128, 3, 3]
  const auto m = testing::moments_of(w);
  EXPECT_NEAR(m.std, std::sqrt(2.0 / (128 * 9)), 0.03 * std::sqrt(2.0 / (128 * 9)));
  EXPECT_NEAR(m.mean, 0.0, 0.005);
  EXPECT_FALSE(net.conv1->bias.defined());
  const auto bn = net.layer3->at<nn::models::BasicBlock>(0)->bn2;
  testing::expect_close(bn->weight, ones({128}));
  testing::expect_close(bn->bias, zeros({128}));
}

TEST(NnResnet, ZeroInitResidual) {
  ResNetConfig c = tiny(ResNetBlock::basic);
  c.zero_init_residual = true;
  ResNet basic(c);
  auto block = basic.layer4->at<nn::models::BasicBlock>(0);
  testing::expect_close(block->bn2->weight, zeros({32}));
  testing::expect_close(block->bn1->weight, ones({32}));
  c.block = ResNetBlock::bottleneck;
  ResNet bottleneck(c);
  auto b = bottleneck.layer1->at<nn::models::Bottleneck>(0);
  testing::expect_close(b->bn3->weight, zeros({16}));
  testing::expect_close(b->bn2->weight, ones({4}));
}

TEST(NnResnet, TorchvisionConfigsByDepth) {
  EXPECT_EQ(nn::models::resnet_config(34).layers, (std::vector<int64_t>{3, 4, 6, 3}));
  EXPECT_EQ(nn::models::resnet_config(34).block, ResNetBlock::basic);
  EXPECT_EQ(nn::models::resnet_config(50, 7).block, ResNetBlock::bottleneck);
  EXPECT_EQ(nn::models::resnet_config(50, 7).num_classes, 7);
  EXPECT_THROW(nn::models::resnet_config(101), ValueError);
}

TEST(NnResnet, RejectsBadConfigAndInput) {
  ResNetConfig c = tiny(ResNetBlock::basic);
  c.layers = {1, 1, 1};
  EXPECT_THROW(ResNet{c}, ValueError);
  c.layers = {1, 0, 1, 1};
  EXPECT_THROW(ResNet{c}, ValueError);
  ResNet net(tiny(ResNetBlock::basic));
  try {
    net.forward(zeros({1, 1, 32, 32}));
    FAIL() << "expected ShapeError";
  } catch (const ShapeError& e) {
    EXPECT_TRUE(testing::contains(e.what(), "[N, 3, H, W]")) << e.what();
  }
}

}  // namespace
}  // namespace hearth
