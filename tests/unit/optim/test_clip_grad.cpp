// clip_grad_norm_ against torch.nn.utils.clip_grad_norm_ (tests/fixtures/optim_reference.py).
#include <cmath>

#include <gtest/gtest.h>

#include "hearth/ops/factory.h"
#include "hearth/ops/view.h"
#include "hearth/optim/clip_grad.h"
#include "tests/unit/optim/optim_testing.h"

namespace hearth {
namespace {

using optim::clip_grad_norm_;

struct ClipCase {
  double norm_type, max_norm, total;
  std::vector<double> g0, g1;
};

TEST(OptimClipGrad, MatchesPyTorch) {
  const std::vector<ClipCase> cases = {
      {2.0,
       1.0,
       2.355843797877949,
       {0.04244761797979052, -0.08489523595958104, 0.12734285393937156, 0.16979047191916208},
       {0.4244761797979052, -0.8489523595958104, 0.2122380898989526}},
      {1.0,
       2.5,
       4.5,
       {0.05555554320987929, -0.11111108641975859, 0.16666662962963785, 0.22222217283951717},
       {0.5555554320987929, -1.1111108641975858, 0.27777771604939644}},
      {optim::kInfNorm,
       0.5,
       2.0,
       {0.02499998750000625, -0.0499999750000125, 0.07499996250001874, 0.099999950000025},
       {0.2499998750000625, -0.499999750000125, 0.12499993750003124}},
      // Below max_norm: untouched (the coefficient clamps to 1).
      {2.0, 100.0, 2.355843797877949, {0.1, -0.2, 0.3, 0.4}, {1.0, -2.0, 0.5}},
  };
  for (const ClipCase& c : cases) {
    SCOPED_TRACE("norm_type " + std::to_string(c.norm_type) + " max_norm " + std::to_string(c.max_norm));
    std::vector<Tensor> params = testing::reference_params();
    testing::set_reference_grads(params, 0);
    Tensor total = clip_grad_norm_(params, c.max_norm, c.norm_type);
    EXPECT_EQ(total.dim(), 0);
    EXPECT_EQ(total.dtype(), DType::float64);
    EXPECT_NEAR(total.item<double>(), c.total, 1e-12);
    testing::expect_values(params[0].grad(), c.g0, 1e-12, "g0");
    testing::expect_values(params[1].grad(), c.g1, 1e-12, "g1");
  }
}

TEST(OptimClipGrad, Float32AndHalfGradients) {
  std::vector<Tensor> params = testing::reference_params(DType::float32);
  testing::set_reference_grads(params, 0);
  Tensor total = clip_grad_norm_(params, 1.0);
  EXPECT_EQ(total.dtype(), DType::float32);
  EXPECT_NEAR(total.item<double>(), 2.355843797877949, 1e-6);
  testing::expect_values(params[1].grad(), {0.4244761797979052, -0.8489523595958104, 0.2122380898989526}, 1e-6, "g1");
  // bfloat16 gradients: the norm is accumulated in float32.
  Tensor p = zeros({4}, DType::bfloat16);
  p.requires_grad_(true);
  p.set_grad(full({4}, 300.0, DType::bfloat16));
  Tensor t = clip_grad_norm_({p}, 1.0);
  EXPECT_EQ(t.dtype(), DType::float32);
  EXPECT_NEAR(t.item<double>(), 600.0, 1e-3);
  testing::expect_values(p.grad(), {0.5, 0.5, 0.5, 0.5}, 4e-3, "bf16 grad");
}

TEST(OptimClipGrad, SkipsMissingGradientsAndHandlesNone) {
  std::vector<Tensor> params = testing::reference_params();
  params[1].set_grad(full({3}, 4.0, DType::float64));  // only p1 has a gradient: norm sqrt(48)
  Tensor total = clip_grad_norm_(params, 1.0);
  EXPECT_NEAR(total.item<double>(), std::sqrt(48.0), 1e-12);
  EXPECT_FALSE(params[0].grad().defined());
  std::vector<Tensor> none = testing::reference_params();
  EXPECT_EQ(clip_grad_norm_(none, 1.0).item<double>(), 0.0);
  EXPECT_EQ(clip_grad_norm_({}, 1.0).item<double>(), 0.0);
}

TEST(OptimClipGrad, NonContiguousGradientsAreScaledInPlace) {
  Tensor p = zeros({2, 3}, DType::float64);
  p.requires_grad_(true);
  Tensor g_base = tensor(std::vector<double>{3, 0, 0, 4, 0, 0}, {3, 2});
  p.set_grad(transpose(g_base, 0, 1));
  Tensor total = clip_grad_norm_({p}, 1.0);
  EXPECT_NEAR(total.item<double>(), 5.0, 1e-12);
  testing::expect_values(g_base, {0.6 * 5 / (5 + 1e-6), 0, 0, 0.8 * 5 / (5 + 1e-6), 0, 0}, 1e-12, "storage");
}

TEST(OptimClipGrad, NonFiniteNormsAndBadArguments) {
  std::vector<Tensor> params = testing::reference_params();
  params[0].set_grad(full({2, 2}, NAN, DType::float64));
  EXPECT_TRUE(std::isnan(clip_grad_norm_(params, 1.0).item<double>()));
  params[0].set_grad(full({2, 2}, INFINITY, DType::float64));
  try {
    clip_grad_norm_(params, 1.0, 2.0, /*error_if_nonfinite=*/true);
    FAIL() << "expected ValueError";
  } catch (const ValueError& e) {
    EXPECT_NE(std::string(e.what()).find("error_if_nonfinite"), std::string::npos) << e.what();
  }
  // The failed call left the gradient as it was.
  EXPECT_TRUE(std::isinf(params[0].grad().to_vector<double>()[0]));
  EXPECT_THROW(clip_grad_norm_(params, -1.0), ValueError);
  EXPECT_THROW(clip_grad_norm_(params, 1.0, 0.0), ValueError);
}

}  // namespace
}  // namespace hearth
