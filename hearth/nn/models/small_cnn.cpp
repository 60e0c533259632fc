#include "hearth/nn/models/small_cnn.h"

#include "hearth/nn/activation.h"
#include "hearth/nn/batchnorm.h"
#include "hearth/nn/conv.h"
#include "hearth/nn/dropout.h"
#include "hearth/nn/flatten.h"
#include "hearth/nn/linear.h"
#include "hearth/nn/pooling.h"

namespace hearth::nn::models {

SmallCNN::SmallCNN(SmallCNNConfig c) : Module("SmallCNN"), config(c) {
  HEARTH_CHECK(c.in_channels > 0 && c.num_classes > 0 && c.channels1 > 0 && c.channels2 > 0 && c.hidden > 0, ValueError,
               "[SmallCNN] channel, class and hidden counts must be positive");
  HEARTH_CHECK(c.image_size >= 4 && c.image_size % 4 == 0, ValueError,
               "[SmallCNN] image_size must be a positive multiple of 4 (two 2x2 poolings), got ", c.image_size);
  HEARTH_CHECK(c.dropout >= 0.0 && c.dropout < 1.0, ValueError, "[SmallCNN] dropout must be in [0, 1), got ",
               c.dropout);
  const int64_t side = c.image_size / 4;
  features = register_module(
      "features", std::make_shared<Sequential>(std::make_shared<Conv2d>(c.in_channels, c.channels1, 3, 1, 1),
                                               std::make_shared<BatchNorm2d>(c.channels1), std::make_shared<ReLU>(),
                                               std::make_shared<MaxPool2d>(2),
                                               std::make_shared<Conv2d>(c.channels1, c.channels2, 3, 1, 1),
                                               std::make_shared<BatchNorm2d>(c.channels2), std::make_shared<ReLU>(),
                                               std::make_shared<MaxPool2d>(2)));
  classifier = register_module(
      "classifier", std::make_shared<Sequential>(std::make_shared<Flatten>(),
                                                 std::make_shared<Linear>(c.channels2 * side * side, c.hidden),
                                                 std::make_shared<ReLU>(), std::make_shared<Dropout>(c.dropout),
                                                 std::make_shared<Linear>(c.hidden, c.num_classes)));
}

Tensor SmallCNN::forward(const Tensor& x) {
  HEARTH_CHECK(x.defined() && x.dim() == 4 && x.size(1) == config.in_channels && x.size(2) == config.image_size &&
                   x.size(3) == config.image_size,
               ShapeError, "[SmallCNN] expected input [N, ", config.in_channels, ", ", config.image_size, ", ",
               config.image_size, "], got ", x.defined() ? "shape " + x.shape_string() : std::string("undefined"));
  return classifier->forward(features->forward(x));
}

}  // namespace hearth::nn::models
