// VGG (Simonyan & Zisserman 2014) with torchvision's layout, parameter names
// and initialisation, so a torchvision state dict loads into it strictly:
//
//   features:   per cfg entry, Conv2d(3x3, pad 1) [BatchNorm2d] ReLU, or
//               MaxPool2d(2) for a pool entry -> features.0, features.1, ...
//   avgpool:    AdaptiveAvgPool2d(7x7)
//   classifier: Linear(C*7*7, width) ReLU Dropout Linear(width, width) ReLU
//               Dropout Linear(width, classes) -> classifier.0, .3, .6
#pragma once

#include <memory>
#include <vector>

#include "hearth/nn/container.h"
#include "hearth/nn/conv_batchnorm.h"
#include "hearth/nn/module.h"
#include "hearth/nn/pooling.h"

namespace hearth::nn::models {

// The cfg entry for a 2x2 max-pool (torchvision writes 'M'); any other entry
// is a 3x3 convolution's output channels.
inline constexpr int64_t kVggPool = 0;

// torchvision's feature cfgs by depth: 11 ("A"), 13 ("B"), 16 ("D"), 19 ("E").
std::vector<int64_t> vgg_features_cfg(int depth);

struct VGGConfig {
  std::vector<int64_t> features = vgg_features_cfg(16);
  bool batch_norm = false;
  int64_t in_channels = 3;
  int64_t num_classes = 1000;
  int64_t classifier_width = 4096;
  double dropout = 0.5;
};

class VGG : public Module {
 public:
  // Draws its initial weights from the global generator (seed first): convs
  // kaiming_normal_(fan_out, relu) with bias 0, BatchNorm weight 1 and bias 0,
  // Linear weight N(0, 0.01) with bias 0.
  explicit VGG(VGGConfig config = {});
  // x [N, in_channels, H, W] -> logits [N, num_classes]. H and W must survive
  // every 2x2 pool (at least 2^pools: 32 for the standard cfgs).
  Tensor forward(const Tensor& x) override;

  VGGConfig config;
  std::shared_ptr<Sequential> features;
  std::shared_ptr<AdaptiveAvgPool2d> avgpool;
  std::shared_ptr<Sequential> classifier;

 private:
  // One per feature, used where a convolution is followed by a batch norm
  // (the _bn variants): folded into one convolution in inference.
  std::vector<ConvBatchNormFold> folds_;
};

// The smallest H and W the features of `cfg` accept (2^pools).
int64_t vgg_min_image_size(const std::vector<int64_t>& cfg);

// torchvision's vgg11/13/16/19 with or without BatchNorm.
std::shared_ptr<VGG> vgg(int depth, bool batch_norm, int64_t num_classes = 1000);
// 138,357,544 and 138,365,992 parameters with 1000 classes.
std::shared_ptr<VGG> vgg16(int64_t num_classes = 1000);
std::shared_ptr<VGG> vgg16_bn(int64_t num_classes = 1000);

}  // namespace hearth::nn::models
