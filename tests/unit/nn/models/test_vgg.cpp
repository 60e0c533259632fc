#include <cmath>

#include <gtest/gtest.h>

#include "hearth/core/generator.h"
#include "hearth/nn/batchnorm.h"
#include "hearth/nn/conv.h"
#include "hearth/nn/dropout.h"
#include "hearth/nn/linear.h"
#include "hearth/nn/models/vgg.h"
#include "hearth/ops/factory.h"
#include "tests/unit/nn/models/fold_testing.h"
#include "tests/unit/nn/models/torchvision_keys.h"
#include "tests/unit/nn/nn_testing.h"

namespace hearth {
namespace {

using nn::models::kVggPool;
using nn::models::VGG;
using nn::models::VGGConfig;

// The golden fixtures' small VGG: [8, M, 16, M, 32, 32, M], width 64.
VGGConfig small(bool batch_norm) {
  VGGConfig c;
  c.features = {8, kVggPool, 16, kVggPool, 32, 32, kVggPool};
  c.batch_norm = batch_norm;
  c.num_classes = 10;
  c.classifier_width = 64;
  c.dropout = 0.0;
  return c;
}

TEST(NnVgg, InferenceFoldsEachBatchNormIntoItsConvolution) {
  manual_seed(22);
  VGG model(small(true));
  testing::expect_folded_inference_matches(model, randn({2, 3, 32, 32}));
}

TEST(NnVgg, Vgg16MatchesTorchvision) {
  testing::expect_torchvision_layout("vgg16", 138357544, [] { return nn::models::vgg16(); });
}
TEST(NnVgg, Vgg16BnMatchesTorchvision) {
  testing::expect_torchvision_layout("vgg16_bn", 138365992, [] { return nn::models::vgg16_bn(); });
}

TEST(NnVgg, TorchvisionIndices) {
  VGG plain(small(false)), bn(small(true));
  // conv relu pool conv relu pool conv relu conv relu pool
  EXPECT_EQ(plain.features->size(), 11u);
  EXPECT_EQ(plain.state_dict().at("features.8.weight").shape(), (Shape{32, 32, 3, 3}));
  // conv bn relu pool ...: a conv's index moves by one per earlier BatchNorm.
  EXPECT_EQ(bn.features->size(), 15u);
  EXPECT_EQ(bn.state_dict().at("features.11.weight").shape(), (Shape{32, 32, 3, 3}));
  EXPECT_EQ(bn.state_dict().at("features.12.running_mean").shape(), (Shape{32}));
  EXPECT_EQ(bn.state_dict().at("classifier.0.weight").shape(), (Shape{64, 32 * 7 * 7}));
  EXPECT_EQ(bn.state_dict().at("classifier.3.weight").shape(), (Shape{64, 64}));
  EXPECT_EQ(bn.state_dict().at("classifier.6.weight").shape(), (Shape{10, 64}));
  EXPECT_EQ(nn::models::vgg_features_cfg(11).size(), 13u);
  EXPECT_EQ(nn::models::vgg_features_cfg(19).size(), 21u);
  EXPECT_THROW(nn::models::vgg_features_cfg(15), ValueError);
}

TEST(NnVgg, ForwardShapes) {
  manual_seed(0);
  VGG bn(small(true));
  EXPECT_EQ(bn.forward(randn({2, 3, 32, 32})).shape(), (Shape{2, 10}));
  // 8x8 is the least three 2x2 pools accept; the adaptive pool then upsamples 1x1 to 7x7.
  EXPECT_EQ(bn.forward(randn({1, 3, 8, 8})).shape(), (Shape{1, 10}));
  VGGConfig grey = small(false);
  grey.in_channels = 1;
  EXPECT_EQ(VGG(grey).forward(randn({2, 1, 28, 28})).shape(), (Shape{2, 10}));
  try {
    bn.forward(randn({1, 3, 7, 8}));
    FAIL() << "expected ShapeError";
  } catch (const ShapeError& e) {
    EXPECT_TRUE(testing::contains(e.what(), "H, W >= 8")) << e.what();
  }
  EXPECT_EQ(nn::models::vgg_min_image_size(nn::models::vgg_features_cfg(16)), 32);
}

TEST(NnVgg, TorchvisionInitialisationAndDropout) {
  manual_seed(2);
  VGGConfig c = small(true);
  c.dropout = 0.5;
  c.classifier_width = 256;
  VGG net(c);
  auto conv = net.features->at<nn::Conv2d>(4);  // 8 -> 16 channels
  EXPECT_NEAR(testing::moments_of(conv->weight).std, std::sqrt(2.0 / (16 * 9)), 0.1 * std::sqrt(2.0 / (16 * 9)));
  testing::expect_close(conv->bias, zeros({16}));
  testing::expect_close(net.features->at<nn::BatchNorm2d>(5)->weight, ones({16}));
  auto fc = net.classifier->at<nn::Linear>(0);
  EXPECT_NEAR(testing::moments_of(fc->weight).std, 0.01, 0.0005);
  testing::expect_close(fc->bias, zeros({256}));
  EXPECT_EQ(net.classifier->at<nn::Dropout>(2)->p, 0.5);
  EXPECT_EQ(VGGConfig{}.dropout, 0.5);
}

TEST(NnVgg, RejectsBadConfig) {
  VGGConfig c = small(false);
  c.features = {kVggPool};
  EXPECT_THROW(VGG{c}, ValueError);
  c.features = {8, -1};
  EXPECT_THROW(VGG{c}, ValueError);
  c = small(false);
  c.dropout = 1.0;
  EXPECT_THROW(VGG{c}, ValueError);
}

}  // namespace
}  // namespace hearth
