// ResNet and VGG against torchvision: the fixture's weights loaded strictly,
// one training-mode forward, cross entropy and backward, then an eval-mode
// forward, every tensor within 1e-4 relative error of PyTorch's (float32).
#include <gtest/gtest-spi.h>
#include <gtest/gtest.h>

#include "hearth/ops/factory.h"
#include "tests/support/golden.h"
#include "tests/support/golden_cnn_models.h"

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

// The checker itself: it must fail on a tensor off by more than its tolerance
// and name it, and compare a zero reference by absolute error.
void compare_reference_of_ones(double offset, const Tensor& zero_grad) {
  testing::ToleranceReport report(1e-4);
  report.compare("logits", ones({4}), ones({4}));
  report.compare("grad.fc.weight", full({4}, 1.0 + offset), ones({4}));
  report.compare("grad.conv.bias", zero_grad, zeros({4}));
  report.expect_all_within("check");
}

TEST(GoldenReport, FailsNamingTheTensorOverTolerance) {
  compare_reference_of_ones(5e-5, full({4}, 1e-8));
  EXPECT_NONFATAL_FAILURE(compare_reference_of_ones(1e-3, zeros({4})), "grad.fc.weight");
  EXPECT_NONFATAL_FAILURE(compare_reference_of_ones(0, full({4}, 1e-5)), "grad.conv.bias at absolute RMS error");
  EXPECT_NONFATAL_FAILURE(compare_reference_of_ones(0, zeros({5})), "shape [5] vs expected [4]");
}

}  // namespace
}  // namespace hearth
