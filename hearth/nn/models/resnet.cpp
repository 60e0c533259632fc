#include "hearth/nn/models/resnet.h"

#include <string>

#include "hearth/nn/init.h"
#include "hearth/ops/view.h"

namespace hearth::nn::models {
namespace {

std::shared_ptr<Conv2d> conv3x3(int64_t in, int64_t out, int64_t stride) {
  return std::make_shared<Conv2d>(in, out, 3, stride, /*padding=*/1, /*dilation=*/1, /*groups=*/1, /*bias=*/false);
}

std::shared_ptr<Conv2d> conv1x1(int64_t in, int64_t out, int64_t stride) {
  return std::make_shared<Conv2d>(in, out, 1, stride, /*padding=*/0, /*dilation=*/1, /*groups=*/1, /*bias=*/false);
}

// The shortcut's input, projected when the block changes its shape; a
// projection of torchvision's form (1x1 conv, batch norm) runs through `fold`.
Tensor shortcut(const std::shared_ptr<Sequential>& downsample, ConvBatchNormFold& fold, const Tensor& x) {
  if (!downsample) return x;
  if (downsample->size() == 2) {
    auto conv = std::dynamic_pointer_cast<Conv2d>((*downsample)[0]);
    auto bn = std::dynamic_pointer_cast<BatchNorm>((*downsample)[1]);
    if (conv && bn) return fold.forward(*conv, *bn, x, /*relu=*/false);
  }
  return downsample->forward(x);
}

}  // namespace

BasicBlock::BasicBlock(int64_t inplanes, int64_t planes, int64_t stride, std::shared_ptr<Sequential> downsample_)
    : Module("BasicBlock") {
  conv1 = register_module("conv1", conv3x3(inplanes, planes, stride));
  bn1 = register_module("bn1", std::make_shared<BatchNorm2d>(planes));
  relu = register_module("relu", std::make_shared<ReLU>());
  conv2 = register_module("conv2", conv3x3(planes, planes, 1));
  bn2 = register_module("bn2", std::make_shared<BatchNorm2d>(planes));
  if (downsample_) downsample = register_module("downsample", std::move(downsample_));
}

Tensor BasicBlock::forward(const Tensor& x) {
  Tensor out = fold1_.forward(*conv1, *bn1, x, /*relu=*/true);
  return fold2_.forward(*conv2, *bn2, out, /*relu=*/true, shortcut(downsample, fold_downsample_, x));
}

Bottleneck::Bottleneck(int64_t inplanes, int64_t planes, int64_t stride, std::shared_ptr<Sequential> downsample_)
    : Module("Bottleneck") {
  conv1 = register_module("conv1", conv1x1(inplanes, planes, 1));
  bn1 = register_module("bn1", std::make_shared<BatchNorm2d>(planes));
  conv2 = register_module("conv2", conv3x3(planes, planes, stride));
  bn2 = register_module("bn2", std::make_shared<BatchNorm2d>(planes));
  conv3 = register_module("conv3", conv1x1(planes, planes * expansion, 1));
  bn3 = register_module("bn3", std::make_shared<BatchNorm2d>(planes * expansion));
  relu = register_module("relu", std::make_shared<ReLU>());
  if (downsample_) downsample = register_module("downsample", std::move(downsample_));
}

Tensor Bottleneck::forward(const Tensor& x) {
  Tensor out = fold1_.forward(*conv1, *bn1, x, /*relu=*/true);
  out = fold2_.forward(*conv2, *bn2, out, /*relu=*/true);
  return fold3_.forward(*conv3, *bn3, out, /*relu=*/true, shortcut(downsample, fold_downsample_, x));
}

namespace {

// One stage: `blocks` blocks of `planes`, the first with `stride` and, when
// the shape changes, a 1x1 conv + BatchNorm projection on the shortcut.
// `inplanes` is advanced to the stage's output channels.
template <typename Block>
std::shared_ptr<Sequential> make_stage(int64_t& inplanes, int64_t planes, int64_t blocks, int64_t stride) {
  auto stage = std::make_shared<Sequential>();
  std::shared_ptr<Sequential> downsample;
  if (stride != 1 || inplanes != planes * Block::expansion) {
    downsample = std::make_shared<Sequential>(conv1x1(inplanes, planes * Block::expansion, stride),
                                              std::make_shared<BatchNorm2d>(planes * Block::expansion));
  }
  stage->push_back(std::make_shared<Block>(inplanes, planes, stride, downsample));
  inplanes = planes * Block::expansion;
  for (int64_t i = 1; i < blocks; ++i) stage->push_back(std::make_shared<Block>(inplanes, planes, 1, nullptr));
  return stage;
}

}  // namespace

ResNet::ResNet(ResNetConfig c) : Module("ResNet"), config(std::move(c)) {
  const ResNetConfig& cf = config;
  HEARTH_CHECK(cf.layers.size() == 4, ValueError, "[ResNet] config.layers must give 4 stage depths, got ",
               cf.layers.size());
  for (int64_t n : cf.layers)
    HEARTH_CHECK(n >= 1, ValueError, "[ResNet] config.layers: every stage needs at least 1 block, got ", n);
  HEARTH_CHECK(cf.num_classes > 0 && cf.base_width > 0 && cf.in_channels > 0, ValueError,
               "[ResNet] config.num_classes, base_width and in_channels must be positive, got ", cf.num_classes, ", ",
               cf.base_width, " and ", cf.in_channels);

  const int64_t w = cf.base_width;
  conv1 = register_module("conv1", std::make_shared<Conv2d>(cf.in_channels, w, 7, /*stride=*/2, /*padding=*/3,
                                                            /*dilation=*/1, /*groups=*/1, /*bias=*/false));
  bn1 = register_module("bn1", std::make_shared<BatchNorm2d>(w));
  relu = register_module("relu", std::make_shared<ReLU>());
  maxpool = register_module("maxpool", std::make_shared<MaxPool2d>(3, /*stride=*/2, /*padding=*/1));

  int64_t inplanes = w;
  std::shared_ptr<Sequential>* stages[4] = {&layer1, &layer2, &layer3, &layer4};
  for (int i = 0; i < 4; ++i) {
    const int64_t planes = w << i, stride = i == 0 ? 1 : 2;
    *stages[i] = cf.block == ResNetBlock::basic
                     ? make_stage<BasicBlock>(inplanes, planes, cf.layers[static_cast<size_t>(i)], stride)
                     : make_stage<Bottleneck>(inplanes, planes, cf.layers[static_cast<size_t>(i)], stride);
    register_module("layer" + std::to_string(i + 1), *stages[i]);
  }
  avgpool = register_module("avgpool", std::make_shared<AdaptiveAvgPool2d>(1));
  fc = register_module("fc", std::make_shared<Linear>(inplanes, cf.num_classes));

  // torchvision's initialisation, after every layer exists (Linear keeps its own).
  for (const std::shared_ptr<Module>& m : modules()) {
    if (auto conv = std::dynamic_pointer_cast<Conv2d>(m)) {
      init::kaiming_normal_(conv->weight, 0.0, "fan_out", "relu");
    } else if (auto bn = std::dynamic_pointer_cast<BatchNorm2d>(m)) {
      init::ones_(bn->weight);
      init::zeros_(bn->bias);
    }
  }
  if (cf.zero_init_residual) {
    for (const std::shared_ptr<Module>& m : modules()) {
      if (auto block = std::dynamic_pointer_cast<BasicBlock>(m)) init::zeros_(block->bn2->weight);
      if (auto block = std::dynamic_pointer_cast<Bottleneck>(m)) init::zeros_(block->bn3->weight);
    }
  }
}

Tensor ResNet::forward(const Tensor& x) {
  HEARTH_CHECK(x.defined() && x.dim() == 4 && x.size(1) == config.in_channels, ShapeError,
               "[ResNet] expected input [N, ", config.in_channels, ", H, W], got ",
               x.defined() ? "shape " + x.shape_string() : std::string("undefined"));
  Tensor h = maxpool->forward(fold_stem_.forward(*conv1, *bn1, x, /*relu=*/true));
  h = layer4->forward(layer3->forward(layer2->forward(layer1->forward(h))));
  return fc->forward(flatten(avgpool->forward(h), 1));
}

ResNetConfig resnet_config(int depth, int64_t num_classes) {
  ResNetConfig c;
  c.num_classes = num_classes;
  switch (depth) {
    case 18:
      c.layers = {2, 2, 2, 2};
      break;
    case 34:
      c.layers = {3, 4, 6, 3};
      break;
    case 50:
      c.block = ResNetBlock::bottleneck;
      c.layers = {3, 4, 6, 3};
      break;
    default:
      HEARTH_THROW(ValueError, "[ResNet] depth must be 18, 34 or 50, got ", depth);
  }
  return c;
}

std::shared_ptr<ResNet> resnet18(int64_t num_classes) {
  return std::make_shared<ResNet>(resnet_config(18, num_classes));
}
std::shared_ptr<ResNet> resnet34(int64_t num_classes) {
  return std::make_shared<ResNet>(resnet_config(34, num_classes));
}
std::shared_ptr<ResNet> resnet50(int64_t num_classes) {
  return std::make_shared<ResNet>(resnet_config(50, num_classes));
}

}  // namespace hearth::nn::models
