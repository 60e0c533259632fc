#include <gtest/gtest.h>

#include <cmath>
#include <limits>

#include "hearth/ops/elementwise.h"
#include "hearth/ops/reduction.h"
#include "tests/unit/ops/reduction_testing.h"

namespace hearth {
namespace {

using red_test::grad_ok;
using red_test::near;
using red_test::random_leaf;
using red_test::throws_with;

const double kInf = std::numeric_limits<double>::infinity();

// [[3, -4, 0], [1, 2, -2]]
Tensor sample(DType dt = DType::float64) {
  return cast(tensor(std::vector<double>{3, -4, 0, 1, 2, -2}, {2, 3}), dt);
}

TEST(ReduceNorm, CommonOrders) {
  EXPECT_TRUE(near(norm(sample(), 2, {1}), {5, 3}));
  EXPECT_TRUE(near(norm(sample(), 1, {1}), {7, 5}));
  EXPECT_TRUE(near(norm(sample(), kInf, {1}), {4, 2}));
  EXPECT_TRUE(near(norm(sample(), -kInf, {1}), {0, 1}));
  EXPECT_TRUE(near(norm(sample(), 0, {1}), {2, 3}));
  EXPECT_TRUE(near(norm(sample(), 3, {1}), {std::cbrt(91.0), std::cbrt(17.0)}));
  EXPECT_TRUE(near(norm(sample()), {std::sqrt(34.0)}));
  Tensor k = norm(sample(), 2, {0}, /*keepdim=*/true);
  EXPECT_EQ(k.shape(), (Shape{1, 3}));
  EXPECT_TRUE(near(k, {std::sqrt(10.0), std::sqrt(20.0), 2}));
}

TEST(ReduceNorm, DtypesAndLayouts) {
  for (DType dt : {DType::float32, DType::bfloat16, DType::float16}) {
    Tensor n = norm(sample(dt), 2, {1});
    EXPECT_EQ(n.dtype(), dt);
    EXPECT_TRUE(near(n, {5, 3}, 1e-2)) << dtype_name(dt);
  }
  EXPECT_TRUE(near(norm(transpose(sample(), 0, 1), 1, {0}), {7, 5}));
  EXPECT_TRUE(near(norm(red_test::strided_copy(sample()), 2, {1}), {5, 3}));
  // float32 values whose squares overflow float32 still give the right norm (double accumulation).
  Tensor big = cast(tensor(std::vector<double>{3e20, 4e20}), DType::float32);
  EXPECT_TRUE(near(norm(big), {5e20}, 1e-6));
}

TEST(ReduceNorm, EmptyAndNan) {
  EXPECT_TRUE(near(norm(zeros({0}, DType::float64)), {0}));
  EXPECT_TRUE(throws_with<ValueError>([] { norm(zeros({0}), kInf); }, "empty"));
  Tensor x = tensor(std::vector<double>{1, NAN, 2}, {3});
  EXPECT_TRUE(std::isnan(norm(x).item<double>()));
  EXPECT_TRUE(std::isnan(norm(x, kInf).item<double>()));
}

TEST(ReduceNorm, BadInput) {
  EXPECT_TRUE(throws_with<TypeError>([] { norm(tensor(std::vector<int64_t>{3, 4})); }, "[norm]"));
  EXPECT_TRUE(throws_with<ValueError>([] { norm(sample(), NAN); }, "[norm]"));
  EXPECT_TRUE(throws_with<ShapeError>([] { norm(sample(), 2, {5}); }, "dimension out of range"));
}

TEST(ReduceNorm, GradientAtZeroIsZero) {
  Tensor x = zeros({3}, DType::float64).requires_grad_();
  norm(x).backward();
  EXPECT_TRUE(near(x.grad(), {0, 0, 0}));
}

TEST(ReduceNorm, InfNormGradientSplitsAmongTies) {
  Tensor x = tensor(std::vector<double>{-3, 3, 1}, {3}).requires_grad_();
  norm(x, kInf).backward();
  EXPECT_TRUE(near(x.grad(), {-0.5, 0.5, 0}));
}

TEST(ReduceNorm, Gradcheck) {
  for (bool nc : {false, true}) {
    Tensor x = random_leaf({3, 4}, nc);
    for (double p : {2.0, 1.0, 3.0, 1.5, 0.5, kInf, -kInf}) {
      EXPECT_TRUE(grad_ok([p](const std::vector<Tensor>& in) { return norm(in[0], p, {1}); }, {x})) << "p=" << p;
      EXPECT_TRUE(grad_ok([p](const std::vector<Tensor>& in) { return norm(in[0], p); }, {x})) << "p=" << p;
    }
    EXPECT_TRUE(grad_ok([](const std::vector<Tensor>& in) { return norm(in[0], 2, {0}, true); }, {x}));
  }
}

}  // namespace
}  // namespace hearth
