// ResNet (He et al. 2015) with torchvision's layout, parameter names and
// initialisation, so a torchvision state dict loads into it strictly:
//
//   conv1 (7x7, stride 2) bn1 relu maxpool (3x3, stride 2, pad 1)
// Every batch norm followed by a ReLU runs it fused (BatchNorm::forward_relu),
// and each block's tail relu(bn(conv(out)) + shortcut) runs in its last batch
// norm's kernels (BatchNorm::forward_add_relu); the ReLU modules stay
// registered (they hold no state), so the module tree reads as PyTorch's.
// In inference (eval mode, no gradient recorded) each convolution and the
// batch norm after it run folded into one convolution with its epilogue
// (ConvBatchNormFold, hearth/nn/conv_batchnorm.h).
//   layer1..layer4: blocks of BasicBlock (resnet18/34) or Bottleneck
//                   (resnet50; the stride sits on its 3x3 conv, "v1.5")
//   avgpool (adaptive 1x1) flatten fc
//
// Block names: layer2.0.conv1.weight, layer2.0.bn1.running_mean, and where a
// block changes the shape of its input, the projection layer2.0.downsample.0
// (1x1 conv) and layer2.0.downsample.1 (BatchNorm2d).
#pragma once

#include <memory>
#include <vector>

#include "hearth/nn/activation.h"
#include "hearth/nn/batchnorm.h"
#include "hearth/nn/container.h"
#include "hearth/nn/conv.h"
#include "hearth/nn/conv_batchnorm.h"
#include "hearth/nn/linear.h"
#include "hearth/nn/module.h"
#include "hearth/nn/pooling.h"

namespace hearth::nn::models {

enum class ResNetBlock { basic, bottleneck };

struct ResNetConfig {
  ResNetBlock block = ResNetBlock::basic;
  // Blocks per stage; four stages, as torchvision's ResNet.
  std::vector<int64_t> layers = {2, 2, 2, 2};
  int64_t num_classes = 1000;
  // Channels of the stem and planes of the first stage; stage i has
  // base_width * 2^i planes (a Bottleneck outputs 4 times its planes).
  int64_t base_width = 64;
  // 3 for RGB; a grey-image task builds the stem for 1.
  int64_t in_channels = 3;
  // Starts the last BatchNorm of every block at weight 0, so each residual
  // branch begins as the identity (torchvision's option of the same name).
  bool zero_init_residual = false;
};

// conv3x3 bn relu conv3x3 bn, plus the shortcut, then relu. expansion 1.
class BasicBlock : public Module {
 public:
  static constexpr int64_t expansion = 1;
  // downsample: the shortcut's projection, or nullptr for the identity.
  BasicBlock(int64_t inplanes, int64_t planes, int64_t stride, std::shared_ptr<Sequential> downsample);
  Tensor forward(const Tensor& x) override;

  std::shared_ptr<Conv2d> conv1, conv2;
  std::shared_ptr<BatchNorm2d> bn1, bn2;
  std::shared_ptr<ReLU> relu;
  std::shared_ptr<Sequential> downsample;

 private:
  ConvBatchNormFold fold1_, fold2_, fold_downsample_;
};

// conv1x1 bn relu conv3x3 (stride) bn relu conv1x1 (planes * 4) bn, plus the
// shortcut, then relu. expansion 4.
class Bottleneck : public Module {
 public:
  static constexpr int64_t expansion = 4;
  Bottleneck(int64_t inplanes, int64_t planes, int64_t stride, std::shared_ptr<Sequential> downsample);
  Tensor forward(const Tensor& x) override;

  std::shared_ptr<Conv2d> conv1, conv2, conv3;
  std::shared_ptr<BatchNorm2d> bn1, bn2, bn3;
  std::shared_ptr<ReLU> relu;
  std::shared_ptr<Sequential> downsample;

 private:
  ConvBatchNormFold fold1_, fold2_, fold3_, fold_downsample_;
};

class ResNet : public Module {
 public:
  // Draws its initial weights from the global generator (seed first):
  // convs kaiming_normal_(fan_out, relu), BatchNorm weight 1 and bias 0,
  // fc as Linear's default.
  explicit ResNet(ResNetConfig config = {});
  // x [N, in_channels, H, W] -> logits [N, num_classes]. Any H, W >= 1 works
  // (the adaptive pool absorbs the size); 224x224 is what ImageNet weights saw.
  Tensor forward(const Tensor& x) override;

  ResNetConfig config;
  std::shared_ptr<Conv2d> conv1;
  std::shared_ptr<BatchNorm2d> bn1;
  std::shared_ptr<ReLU> relu;
  std::shared_ptr<MaxPool2d> maxpool;
  std::shared_ptr<Sequential> layer1, layer2, layer3, layer4;
  std::shared_ptr<AdaptiveAvgPool2d> avgpool;
  std::shared_ptr<Linear> fc;

 private:
  ConvBatchNormFold fold_stem_;
};

// torchvision's configuration for depth 18, 34 (BasicBlock) or 50
// (Bottleneck), to adjust before building (in_channels for grey images).
ResNetConfig resnet_config(int depth, int64_t num_classes = 1000);

// torchvision's models (11,689,512, 21,797,672 and 25,557,032 parameters
// with 1000 classes).
std::shared_ptr<ResNet> resnet18(int64_t num_classes = 1000);
std::shared_ptr<ResNet> resnet34(int64_t num_classes = 1000);
std::shared_ptr<ResNet> resnet50(int64_t num_classes = 1000);

}  // namespace hearth::nn::models
