// A small convolutional network for 28x28 grey images (MNIST, Fashion-MNIST):
//
//   features:   Conv2d(in, c1, 3, pad 1) BatchNorm2d ReLU MaxPool2d(2)
//               Conv2d(c1, c2, 3, pad 1) BatchNorm2d ReLU MaxPool2d(2)
//   classifier: Flatten Linear(c2 * 7 * 7, hidden) ReLU Dropout Linear(hidden, classes)
//
// Parameter names follow that layout: features.0.weight, features.1.running_mean,
// classifier.1.weight, ... Sized to train an epoch of Fashion-MNIST in minutes
// on two CPU cores and reach about 90% test accuracy.
#pragma once

#include "hearth/nn/container.h"
#include "hearth/nn/module.h"

namespace hearth::nn::models {

struct SmallCNNConfig {
  int64_t in_channels = 1;
  int64_t num_classes = 10;
  int64_t image_size = 28;  // divisible by 4 (two 2x2 poolings)
  int64_t channels1 = 16;
  int64_t channels2 = 32;
  int64_t hidden = 128;
  double dropout = 0.25;
};

class SmallCNN : public Module {
 public:
  explicit SmallCNN(SmallCNNConfig config = {});
  // x [N, in_channels, image_size, image_size] -> logits [N, num_classes].
  Tensor forward(const Tensor& x) override;

  SmallCNNConfig config;
  std::shared_ptr<Sequential> features, classifier;
};

}  // namespace hearth::nn::models
