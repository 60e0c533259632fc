#include "hearth/nn/models/vgg.h"

#include "hearth/nn/activation.h"
#include "hearth/nn/batchnorm.h"
#include "hearth/nn/conv.h"
#include "hearth/nn/dropout.h"
#include "hearth/nn/init.h"
#include "hearth/nn/linear.h"
#include "hearth/ops/view.h"

namespace hearth::nn::models {

namespace {
constexpr int64_t M = kVggPool;
constexpr int64_t kPooledSide = 7;  // avgpool's output, fixed by torchvision's classifier
}  // namespace

std::vector<int64_t> vgg_features_cfg(int depth) {
  switch (depth) {
    case 11:
      return {64, M, 128, M, 256, 256, M, 512, 512, M, 512, 512, M};
    case 13:
      return {64, 64, M, 128, 128, M, 256, 256, M, 512, 512, M, 512, 512, M};
    case 16:
      return {64, 64, M, 128, 128, M, 256, 256, 256, M, 512, 512, 512, M, 512, 512, 512, M};
    case 19:
      return {64, 64, M, 128, 128, M, 256, 256, 256, 256, M, 512, 512, 512, 512, M, 512, 512, 512, 512, M};
    default:
      HEARTH_THROW(ValueError, "[VGG] depth must be 11, 13, 16 or 19, got ", depth);
  }
}

int64_t vgg_min_image_size(const std::vector<int64_t>& cfg) {
  int64_t side = 1;
  for (int64_t v : cfg)
    if (v == kVggPool) side *= 2;
  return side;
}

VGG::VGG(VGGConfig c) : Module("VGG"), config(std::move(c)) {
  const VGGConfig& cf = config;
  HEARTH_CHECK(cf.in_channels > 0 && cf.num_classes > 0 && cf.classifier_width > 0, ValueError,
               "[VGG] config.in_channels, num_classes and classifier_width must be positive, got ", cf.in_channels,
               ", ", cf.num_classes, " and ", cf.classifier_width);
  HEARTH_CHECK(cf.dropout >= 0.0 && cf.dropout < 1.0, ValueError, "[VGG] config.dropout must be in [0, 1), got ",
               cf.dropout);
  features = register_module("features", std::make_shared<Sequential>());
  int64_t channels = cf.in_channels;
  bool has_conv = false;
  for (int64_t v : cf.features) {
    HEARTH_CHECK(v >= 0, ValueError, "[VGG] config.features: entries are output channels (> 0) or kVggPool (0), got ",
                 v);
    if (v == kVggPool) {
      features->push_back(std::make_shared<MaxPool2d>(2, /*stride=*/2));
      continue;
    }
    features->push_back(std::make_shared<Conv2d>(channels, v, 3, /*stride=*/1, /*padding=*/1));
    if (cf.batch_norm) features->push_back(std::make_shared<BatchNorm2d>(v));
    features->push_back(std::make_shared<ReLU>());
    channels = v;
    has_conv = true;
  }
  HEARTH_CHECK(has_conv, ValueError, "[VGG] config.features must hold at least one convolution");
  avgpool = register_module("avgpool", std::make_shared<AdaptiveAvgPool2d>(kPooledSide));
  const int64_t width = cf.classifier_width;
  classifier = register_module(
      "classifier", std::make_shared<Sequential>(std::make_shared<Linear>(channels * kPooledSide * kPooledSide, width),
                                                 std::make_shared<ReLU>(), std::make_shared<Dropout>(cf.dropout),
                                                 std::make_shared<Linear>(width, width), std::make_shared<ReLU>(),
                                                 std::make_shared<Dropout>(cf.dropout),
                                                 std::make_shared<Linear>(width, cf.num_classes)));

  for (const std::shared_ptr<Module>& m : modules()) {
    if (auto conv = std::dynamic_pointer_cast<Conv2d>(m)) {
      init::kaiming_normal_(conv->weight, 0.0, "fan_out", "relu");
      init::zeros_(conv->bias);
    } else if (auto bn = std::dynamic_pointer_cast<BatchNorm2d>(m)) {
      init::ones_(bn->weight);
      init::zeros_(bn->bias);
    } else if (auto fc = std::dynamic_pointer_cast<Linear>(m)) {
      init::normal_(fc->weight, 0.0, 0.01);
      init::zeros_(fc->bias);
    }
  }
}

Tensor VGG::forward(const Tensor& x) {
  const int64_t min_side = vgg_min_image_size(config.features);
  HEARTH_CHECK(
      x.defined() && x.dim() == 4 && x.size(1) == config.in_channels && x.size(2) >= min_side && x.size(3) >= min_side,
      ShapeError, "[VGG] expected input [N, ", config.in_channels, ", H, W] with H, W >= ", min_side,
      " (one halving per max-pool), got ", x.defined() ? "shape " + x.shape_string() : std::string("undefined"));
  // The features run as the Sequential would, but each ReLU joins the op
  // before it: conv2d_relu, or batch norm's fused ReLU (one pass fewer over
  // every feature map, forward and backward); a convolution and the batch
  // norm after it go through a fold (one convolution in inference).
  Tensor h = x;
  if (folds_.size() != features->size()) folds_.assign(features->size(), ConvBatchNormFold());
  auto at = [&](size_t i) -> std::shared_ptr<Module> {
    return i < features->size() ? (*features)[static_cast<int64_t>(i)] : nullptr;
  };
  for (size_t i = 0; i < features->size(); ++i) {
    const std::shared_ptr<Module>& m = (*features)[static_cast<int64_t>(i)];
    const bool relu_next = std::dynamic_pointer_cast<ReLU>(at(i + 1)) != nullptr;
    auto conv = std::dynamic_pointer_cast<Conv2d>(m);
    if (auto bn = std::dynamic_pointer_cast<BatchNorm2d>(at(i + 1)); conv && bn) {
      const bool relu = std::dynamic_pointer_cast<ReLU>(at(i + 2)) != nullptr;
      h = folds_[i].forward(*conv, *bn, h, relu);
      i += relu ? 2 : 1;
    } else if (conv && relu_next) {
      h = conv->forward_relu(h);
      ++i;
    } else if (auto bn = std::dynamic_pointer_cast<BatchNorm2d>(m); bn && relu_next) {
      h = bn->forward_relu(h);
      ++i;
    } else {
      h = m->forward(h);
    }
  }
  return classifier->forward(flatten(avgpool->forward(h), 1));
}

std::shared_ptr<VGG> vgg(int depth, bool batch_norm, int64_t num_classes) {
  VGGConfig c;
  c.features = vgg_features_cfg(depth);
  c.batch_norm = batch_norm;
  c.num_classes = num_classes;
  return std::make_shared<VGG>(c);
}

std::shared_ptr<VGG> vgg16(int64_t num_classes) { return vgg(16, false, num_classes); }
std::shared_ptr<VGG> vgg16_bn(int64_t num_classes) { return vgg(16, true, num_classes); }

}  // namespace hearth::nn::models
