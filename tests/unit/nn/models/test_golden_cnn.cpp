// ResNet and VGG against torchvision: the fixture's weights loaded strictly,
// one training-mode forward, cross entropy and backward, then an eval-mode
// forward, every tensor within 1e-4 relative error of PyTorch's (float32).
#include <gtest/gtest.h>

#include "tests/support/golden.h"
#include "tests/unit/nn/models/golden_cnn_models.h"

namespace hearth {
namespace {

constexpr double kTolerance = 1e-4;

class GoldenCnn : public ::testing::TestWithParam<std::string> {};

TEST_P(GoldenCnn, MatchesTorchvision) {
  auto model = testing::golden_cnn(GetParam());
  testing::run_golden_step(*model, GetParam(), Device(), kTolerance);
}

INSTANTIATE_TEST_SUITE_P(Torchvision, GoldenCnn,
                         ::testing::Values("resnet_basic", "resnet_bottleneck", "vgg_bn", "vgg"),
                         [](const auto& info) { return info.param; });

}  // namespace
}  // namespace hearth
