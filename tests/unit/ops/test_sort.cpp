#include <gtest/gtest.h>

#include <limits>

#include "hearth/ops/elementwise.h"
#include "hearth/ops/reduction.h"
#include "tests/unit/ops/reduction_testing.h"

namespace hearth {
namespace {

using red_test::grad_ok;
using red_test::ints;
using red_test::near;
using red_test::random_leaf;
using red_test::throws_with;

const double kNan = std::numeric_limits<double>::quiet_NaN();

// [[3, 1, 2], [0, 5, 4]]
Tensor sample(DType dt = DType::float32) { return cast(tensor(std::vector<double>{3, 1, 2, 0, 5, 4}, {2, 3}), dt); }

TEST(Sort, AscendingAndDescending) {
  auto [v, i] = sort(sample());
  EXPECT_TRUE(near(v, {1, 2, 3, 0, 4, 5}));
  EXPECT_EQ(ints(i), (std::vector<int64_t>{1, 2, 0, 0, 2, 1}));
  auto [vd, id] = sort(sample(), -1, /*descending=*/true);
  EXPECT_TRUE(near(vd, {3, 2, 1, 5, 4, 0}));
  EXPECT_EQ(ints(id), (std::vector<int64_t>{0, 2, 1, 1, 2, 0}));
}

TEST(Sort, AlongTheFirstDim) {
  auto [v, i] = sort(sample(), 0);
  EXPECT_TRUE(near(v, {0, 1, 2, 3, 5, 4}));
  EXPECT_EQ(ints(i), (std::vector<int64_t>{1, 0, 0, 0, 1, 1}));
  EXPECT_TRUE(v.is_contiguous());
}

TEST(Sort, StableOnTiesBothWays) {
  Tensor x = tensor(std::vector<float>{2, 1, 2, 1, 2}, {5});
  EXPECT_EQ(ints(sort(x).second), (std::vector<int64_t>{1, 3, 0, 2, 4}));
  EXPECT_EQ(ints(sort(x, 0, true).second), (std::vector<int64_t>{0, 2, 4, 1, 3}));
}

TEST(Sort, NanOrdersAboveEverything) {
  Tensor x = tensor(std::vector<double>{2, kNan, -1, kNan}, {4});
  auto [v, i] = sort(x);
  EXPECT_TRUE(near(v, {-1, 2, kNan, kNan}));
  EXPECT_EQ(ints(i), (std::vector<int64_t>{2, 0, 1, 3}));
  auto [vd, id] = sort(x, 0, true);
  EXPECT_TRUE(near(vd, {kNan, kNan, 2, -1}));
  EXPECT_EQ(ints(id), (std::vector<int64_t>{1, 3, 0, 2}));
}

TEST(Sort, EveryDtype) {
  for (DType dt : {DType::float64, DType::bfloat16, DType::float16, DType::int64, DType::int32, DType::uint8}) {
    auto [v, i] = sort(sample(dt), 1, true);
    EXPECT_EQ(v.dtype(), dt);
    EXPECT_TRUE(near(v, {3, 2, 1, 5, 4, 0})) << dtype_name(dt);
  }
  Tensor b = tensor(std::vector<bool>{true, false, true}, {3});
  EXPECT_EQ(sort(b).first.to_vector<bool>(), (std::vector<bool>{false, true, true}));
}

TEST(Sort, NonContiguousEmptyAndZeroDim) {
  EXPECT_TRUE(near(sort(transpose(sample(), 0, 1), 0).first, {1, 0, 2, 4, 3, 5}));
  EXPECT_TRUE(near(sort(red_test::strided_copy(sample())).first, {1, 2, 3, 0, 4, 5}));
  EXPECT_EQ(sort(zeros({0, 3})).first.shape(), (Shape{0, 3}));
  EXPECT_EQ(sort(zeros({3, 0})).second.shape(), (Shape{3, 0}));
  auto [v, i] = sort(scalar_tensor(2.0, DType::float64));
  EXPECT_EQ(v.shape(), Shape{});
  EXPECT_EQ(i.item<int64_t>(), 0);
  EXPECT_TRUE(throws_with<ShapeError>([] { sort(sample(), 2); }, "[sort] dimension out of range"));
}

TEST(Topk, LargestAndSmallest) {
  auto [v, i] = topk(sample(), 2);
  EXPECT_EQ(v.shape(), (Shape{2, 2}));
  EXPECT_TRUE(near(v, {3, 2, 5, 4}));
  EXPECT_EQ(ints(i), (std::vector<int64_t>{0, 2, 1, 2}));
  auto [vs, is] = topk(sample(), 1, 1, /*largest=*/false);
  EXPECT_TRUE(near(vs, {1, 0}));
  EXPECT_EQ(ints(is), (std::vector<int64_t>{1, 0}));
  auto [v0, i0] = topk(sample(), 1, 0);
  EXPECT_EQ(v0.shape(), (Shape{1, 3}));
  EXPECT_TRUE(near(v0, {3, 5, 4}));
  EXPECT_EQ(ints(i0), (std::vector<int64_t>{0, 1, 1}));
}

TEST(Topk, TiesNanAndDtypes) {
  Tensor x = tensor(std::vector<double>{1, 4, kNan, 4, 0}, {5});
  auto [v, i] = topk(x, 3);
  EXPECT_TRUE(near(v, {kNan, 4, 4}));
  EXPECT_EQ(ints(i), (std::vector<int64_t>{2, 1, 3}));
  for (DType dt : {DType::bfloat16, DType::float16, DType::int32, DType::uint8}) {
    auto [vd, id] = topk(sample(dt), 2, 1, false);
    EXPECT_TRUE(near(vd, {1, 2, 0, 4})) << dtype_name(dt);
    EXPECT_EQ(ints(id), (std::vector<int64_t>{1, 2, 0, 2}));
  }
}

TEST(Topk, EdgeSizes) {
  EXPECT_EQ(topk(sample(), 0).first.shape(), (Shape{2, 0}));
  EXPECT_TRUE(near(topk(sample(), 3).first, {3, 2, 1, 5, 4, 0}));
  EXPECT_TRUE(near(topk(red_test::strided_copy(sample()), 1).first, {3, 5}));
  EXPECT_TRUE(throws_with<ValueError>([] { topk(sample(), 4); }, "k (4) is out of range for dimension 1 of size 3"));
  EXPECT_TRUE(throws_with<ValueError>([] { topk(sample(), -1); }, "[topk]"));
}

TEST(Sort, GradientGoesBackToTheSourcePositions) {
  Tensor x = tensor(std::vector<double>{3, 1, 2}, {3}).requires_grad_();
  Tensor w = tensor(std::vector<double>{10, 20, 30}, {3});
  sum(mul(sort(x).first, w)).backward();  // sorted: x1, x2, x0
  EXPECT_TRUE(near(x.grad(), {30, 10, 20}));
  Tensor y = tensor(std::vector<double>{3, 1, 2}, {3}).requires_grad_();
  sum(topk(y, 2).first).backward();
  EXPECT_TRUE(near(y.grad(), {1, 0, 1}));
}

TEST(Sort, Gradcheck) {
  for (bool nc : {false, true}) {
    Tensor x = random_leaf({3, 4}, nc);
    EXPECT_TRUE(grad_ok([](const std::vector<Tensor>& in) { return sort(in[0]).first; }, {x}));
    EXPECT_TRUE(grad_ok([](const std::vector<Tensor>& in) { return sort(in[0], 0, true).first; }, {x}));
  }
}

TEST(Topk, Gradcheck) {
  for (bool nc : {false, true}) {
    Tensor x = random_leaf({3, 5}, nc);
    EXPECT_TRUE(grad_ok([](const std::vector<Tensor>& in) { return topk(in[0], 2).first; }, {x}));
    EXPECT_TRUE(grad_ok([](const std::vector<Tensor>& in) { return topk(in[0], 2, 0, false).first; }, {x}));
  }
}

}  // namespace
}  // namespace hearth
