// ResNet and VGG run channels_last end to end: the same logits and gradients
// as in NCHW, with every conv weight converted by nn::to_channels_last.
#include <gtest/gtest.h>

#include "hearth/core/generator.h"
#include "hearth/nn/models/resnet.h"
#include "hearth/nn/models/vgg.h"
#include "hearth/ops/factory.h"
#include "hearth/ops/nn_functional.h"
#include "hearth/ops/view.h"
#include "tests/unit/nn/nn_testing.h"

namespace hearth {
namespace {

const MemoryFormat kCl = MemoryFormat::channels_last;

// Runs forward + backward of `make()`'s model twice, NCHW and channels_last,
// with identical weights and input; compares logits and every gradient.
template <typename Make>
void expect_channels_last_matches(Make make, const Shape& input_shape) {
  manual_seed(11);
  auto reference = make();
  manual_seed(11);
  auto converted = make();
  nn::to_channels_last(*converted);
  for (const Tensor& p : converted->parameters())
    if (p.dim() == 4 && p.size(1) > 1 && p.size(2) * p.size(3) > 1) {  // 1x1: both formats coincide
      EXPECT_EQ(p.suggest_memory_format(), kCl) << p.shape_string();
    }
  Tensor x = randn(input_shape);
  Tensor y0 = reference->forward(x);
  Tensor y1 = converted->forward(contiguous(x, kCl));
  testing::expect_close(y0, y1, 1e-4);
  y0.sum().backward();
  y1.sum().backward();
  const auto p0 = reference->named_parameters(), p1 = converted->named_parameters();
  ASSERT_EQ(p0.size(), p1.size());
  for (size_t i = 0; i < p0.size(); ++i) {
    SCOPED_TRACE(p0[i].first);
    ASSERT_TRUE(p1[i].second.grad().defined());
    EXPECT_EQ(p1[i].second.grad().suggest_memory_format(), p1[i].second.suggest_memory_format());
    testing::expect_close(p0[i].second.grad(), p1[i].second.grad().contiguous(), 2e-3);
  }
}

nn::models::ResNetConfig tiny_resnet(nn::models::ResNetBlock block) {
  nn::models::ResNetConfig c;
  c.block = block;
  c.layers = {1, 1, 1, 1};
  c.base_width = 4;
  c.num_classes = 5;
  return c;
}

TEST(ChannelsLastModels, ResnetBottleneckMatchesNchw) {
  expect_channels_last_matches(
      [] { return std::make_shared<nn::models::ResNet>(tiny_resnet(nn::models::ResNetBlock::bottleneck)); },
      {2, 3, 32, 32});
}

TEST(ChannelsLastModels, ResnetBasicMatchesNchw) {
  expect_channels_last_matches(
      [] { return std::make_shared<nn::models::ResNet>(tiny_resnet(nn::models::ResNetBlock::basic)); }, {2, 3, 24, 28});
}

TEST(ChannelsLastModels, VggWithBatchNormMatchesNchw) {
  expect_channels_last_matches(
      [] {
        nn::models::VGGConfig c;
        c.features = {4, nn::models::kVggPool, 8, nn::models::kVggPool};
        c.batch_norm = true;
        c.num_classes = 3;
        c.classifier_width = 16;
        c.dropout = 0.0;
        return std::make_shared<nn::models::VGG>(c);
      },
      {2, 3, 8, 8});
}

TEST(ChannelsLastModels, ModuleToMemoryFormatRoundTrips) {
  manual_seed(12);
  auto net = std::make_shared<nn::models::ResNet>(tiny_resnet(nn::models::ResNetBlock::basic));
  const Tensor w = net->conv1->weight;
  const std::vector<float> before = w.contiguous().to_vector<float>();
  net->to(kCl);
  EXPECT_TRUE(net->conv1->weight.is_same(w));  // identity kept: optimizers built before still hold it
  EXPECT_EQ(w.suggest_memory_format(), kCl);
  EXPECT_EQ(w.contiguous().to_vector<float>(), before);
  EXPECT_TRUE(net->fc->weight.is_contiguous());  // 2-D parameters untouched
  net->to(MemoryFormat::contiguous);
  EXPECT_TRUE(w.is_contiguous());
  EXPECT_EQ(w.to_vector<float>(), before);
}

}  // namespace
}  // namespace hearth
