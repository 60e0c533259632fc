// The small CNNs of the golden fixtures (tests/fixtures/golden/<name>.*),
// built exactly as the fixtures' torchvision models were.
#pragma once

#include <memory>
#include <string>

#include "hearth/core/errors.h"
#include "hearth/nn/models/resnet.h"
#include "hearth/nn/models/vgg.h"

namespace hearth::testing {

inline std::shared_ptr<nn::Module> golden_cnn(const std::string& name) {
  using namespace nn::models;
  if (name == "resnet_basic" || name == "resnet_bottleneck") {
    ResNetConfig c;
    const bool basic = name == "resnet_basic";
    c.block = basic ? ResNetBlock::basic : ResNetBlock::bottleneck;
    c.layers = basic ? std::vector<int64_t>{2, 2, 2, 2} : std::vector<int64_t>{1, 1, 1, 1};
    c.base_width = basic ? 16 : 8;
    c.num_classes = 10;
    return std::make_shared<ResNet>(c);
  }
  if (name == "vgg" || name == "vgg_bn") {
    VGGConfig c;
    c.features = {8, kVggPool, 16, kVggPool, 32, 32, kVggPool};
    c.batch_norm = name == "vgg_bn";
    c.num_classes = 10;
    c.classifier_width = 64;
    c.dropout = 0.0;
    return std::make_shared<VGG>(c);
  }
  HEARTH_THROW(ValueError, "no golden CNN named \"", name, "\"");
}

}  // namespace hearth::testing
