#include <gtest/gtest.h>

#include "hearth/autograd/gradcheck.h"
#include "hearth/nn/layer_norm.h"
#include "hearth/ops/factory.h"
#include "hearth/ops/nn_functional.h"
#include "tests/unit/nn/nn_testing.h"

namespace hearth {
namespace {

using nn::LayerNorm;
using testing::expect_close;

TEST(NnLayerNorm, ForwardMatchesTheFunctionalOp) {
  LayerNorm ln(Shape{3, 4}, 1e-6);
  EXPECT_EQ(ln.weight.shape(), (Shape{3, 4}));
  EXPECT_EQ(ln.weight.to_vector<float>(), std::vector<float>(12, 1.0f));
  EXPECT_EQ(ln.bias.to_vector<float>(), std::vector<float>(12, 0.0f));
  Tensor x = randn({2, 3, 4});
  expect_close(ln.forward(x), layer_norm(x, {3, 4}, ln.weight, ln.bias, 1e-6), 0);
  LayerNorm one(8);
  EXPECT_EQ(one.normalized_shape, (Shape{8}));
  EXPECT_EQ(one.extra_repr(), "[8], eps=1e-05, elementwise_affine=true");
}

TEST(NnLayerNorm, WithoutAffineOrBias) {
  LayerNorm plain(4, 1e-5, /*elementwise_affine=*/false);
  EXPECT_TRUE(plain.parameters().empty());
  Tensor x = randn({3, 4});
  expect_close(plain.forward(x), layer_norm(x, {4}), 0);
  LayerNorm no_bias(4, 1e-5, true, /*bias=*/false);
  EXPECT_EQ(no_bias.named_parameters().size(), 1u);
  EXPECT_FALSE(no_bias.bias.defined());
}

TEST(NnLayerNorm, Gradcheck) {
  LayerNorm ln(5);
  ln.to(DType::float64);
  Tensor x = randn({3, 5}, DType::float64);
  x.requires_grad_(true);
  GradcheckResult r =
      gradcheck([&](const std::vector<Tensor>& in) { return ln.forward(in[0]); }, {x, ln.weight, ln.bias});
  EXPECT_TRUE(r.ok) << r.message;
}

TEST(NnLayerNorm, BadArguments) {
  EXPECT_THROW(LayerNorm(Shape{}), ValueError);
  EXPECT_THROW(LayerNorm(4, 0.0), ValueError);
  LayerNorm ln(4);
  EXPECT_THROW(ln.forward(zeros({2, 5})), ShapeError);
}

}  // namespace
}  // namespace hearth
