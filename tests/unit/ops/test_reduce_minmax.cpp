#include <limits>

#include <gtest/gtest.h>

#include "hearth/ops/elementwise.h"
#include "hearth/ops/factory.h"
#include "hearth/ops/reduction.h"
#include "hearth/ops/view.h"
#include "tests/unit/ops/reduction_testing.h"

namespace hearth {
namespace {

using red_test::grad_ok;
using red_test::ints;
using red_test::near;
using red_test::random_leaf;
using red_test::throws_with;

const double kNan = std::numeric_limits<double>::quiet_NaN();

// [[3, 1, 4], [1, 5, 9]]
Tensor sample(DType dt = DType::float32) { return cast(tensor(std::vector<double>{3, 1, 4, 1, 5, 9}, {2, 3}), dt); }

TEST(ReduceAmax, AllAndSomeDims) {
  EXPECT_TRUE(near(amax(sample()), {9}));
  EXPECT_TRUE(near(amin(sample()), {1}));
  EXPECT_TRUE(near(amax(sample(), {0}), {3, 5, 9}));
  EXPECT_TRUE(near(amin(sample(), {1}), {1, 1}));
  Tensor k = amax(sample(), {-1}, /*keepdim=*/true);
  EXPECT_EQ(k.shape(), (Shape{2, 1}));
  EXPECT_TRUE(near(k, {4, 9}));
  EXPECT_TRUE(near(sample().max(), {9}));
  EXPECT_TRUE(near(sample().min(), {1}));
}

TEST(ReduceAmax, EveryDtype) {
  for (DType dt :
       {DType::float32, DType::float64, DType::bfloat16, DType::float16, DType::int64, DType::int32, DType::uint8}) {
    Tensor m = amax(sample(dt), {1});
    EXPECT_EQ(m.dtype(), dt);
    EXPECT_TRUE(near(m, {4, 9})) << dtype_name(dt);
    EXPECT_TRUE(near(amin(sample(dt), {0}), {1, 1, 4})) << dtype_name(dt);
  }
  Tensor b = tensor(std::vector<bool>{false, true, false, false}, {2, 2});
  EXPECT_EQ(amax(b, {1}).to_vector<bool>(), (std::vector<bool>{true, false}));
  EXPECT_EQ(amin(b).to_vector<bool>(), (std::vector<bool>{false}));
}

TEST(ReduceAmax, NegativeValuesAndInfinities) {
  const double inf = std::numeric_limits<double>::infinity();
  Tensor x = tensor(std::vector<double>{-3, -inf, -1, -7}, {4});
  EXPECT_TRUE(near(amax(x), {-1}));
  EXPECT_TRUE(near(amin(x), {-inf}));
}

TEST(ReduceAmax, NanPropagates) {
  Tensor x = tensor(std::vector<double>{1, kNan, 3, 2, 5, 4}, {2, 3});
  EXPECT_TRUE(near(amax(x, {1}), {kNan, 5}));
  EXPECT_TRUE(near(amin(x, {1}), {kNan, 2}));
  EXPECT_TRUE(std::isnan(amax(x).item<double>()));
}

// Long bool rows are cut into chunks reduced by several threads; each chunk's
// result must live in its own object (a packed vector<bool> loses writes).
TEST(ReduceAmax, LongBoolRowsAcrossThreads) {
  Tensor all_true = ones({1 << 20}, DType::bool_);
  Tensor one_false = all_true.clone();
  fill_(slice(one_false, 0, 777777, 777778), 0);
  for (int rep = 0; rep < 20; ++rep) {
    ASSERT_TRUE(amin(all_true).item<bool>()) << "repetition " << rep;
    ASSERT_TRUE(amax(one_false).item<bool>()) << "repetition " << rep;
    ASSERT_FALSE(amin(one_false).item<bool>()) << "repetition " << rep;
    ASSERT_EQ(std::get<1>(min_dim(one_false, 0)).item<int64_t>(), 777777) << "repetition " << rep;
  }
}

TEST(ReduceAmax, LongRowUsesChunksAndFindsTheExtreme) {
  Tensor x = cast(red_test::seq({100000}), DType::float32);
  EXPECT_EQ(amax(x).item<double>(), 99999.0);
  EXPECT_EQ(amin(x).item<double>(), 0.0);
  auto [v, i] = max_dim(x, 0);
  EXPECT_EQ(i.item<int64_t>(), 99999);
  EXPECT_EQ(argmin(x, 0).item<int64_t>(), 0);
}

TEST(ReduceAmax, NonContiguousInput) {
  Tensor t = transpose(sample(), 0, 1);  // [[3,1],[1,5],[4,9]]
  EXPECT_TRUE(near(amax(t, {1}), {3, 5, 9}));
  EXPECT_TRUE(near(amin(red_test::strided_copy(sample()), {1}), {1, 1}));
}

TEST(ReduceAmax, EmptyReductionIsAnError) {
  EXPECT_TRUE(throws_with<ValueError>([] { amax(zeros({0, 3})); }, "dimension of size 0"));
  EXPECT_TRUE(throws_with<ValueError>([] { amin(zeros({2, 0}), {1}); }, "[amin]"));
  EXPECT_TRUE(throws_with<ValueError>([] { max_dim(zeros({2, 0}), 1); }, "[max_dim]"));
  EXPECT_EQ(amax(zeros({0, 3}), {1}).shape(), Shape{0});  // reducing a non-empty dim of an empty tensor is fine
}

TEST(ReduceAmax, BadDims) {
  EXPECT_TRUE(throws_with<ShapeError>([] { amax(sample(), {2}); }, "dimension out of range"));
  EXPECT_TRUE(throws_with<ValueError>([] { amin(sample(), {0, 0}); }, "more than once"));
  EXPECT_TRUE(throws_with<ShapeError>([] { argmax(sample(), -3); }, "[argmax]"));
}

TEST(ReduceMaxDim, ValuesAndIndices) {
  auto [v, i] = max_dim(sample(), 1);
  EXPECT_TRUE(near(v, {4, 9}));
  EXPECT_EQ(ints(i), (std::vector<int64_t>{2, 2}));
  auto [v0, i0] = min_dim(sample(), 0, /*keepdim=*/true);
  EXPECT_EQ(v0.shape(), (Shape{1, 3}));
  EXPECT_TRUE(near(v0, {1, 1, 4}));
  EXPECT_EQ(ints(i0), (std::vector<int64_t>{1, 0, 0}));
}

TEST(ReduceMaxDim, TiesPickTheFirstOccurrence) {
  Tensor x = tensor(std::vector<float>{2, 7, 7, 1, 1, 0}, {2, 3});
  EXPECT_EQ(ints(argmax(x, 1)), (std::vector<int64_t>{1, 0}));
  EXPECT_EQ(ints(argmin(x, 1)), (std::vector<int64_t>{0, 2}));
  Tensor c = full({5}, 3.0f);
  EXPECT_EQ(argmax(c, 0).item<int64_t>(), 0);
  EXPECT_EQ(argmin(c, 0).item<int64_t>(), 0);
}

TEST(ReduceMaxDim, NanWinsAtItsFirstPosition) {
  Tensor x = tensor(std::vector<double>{1, kNan, 9, kNan}, {4});
  auto [v, i] = max_dim(x, 0);
  EXPECT_TRUE(std::isnan(v.item<double>()));
  EXPECT_EQ(i.item<int64_t>(), 1);
  EXPECT_EQ(argmin(x, 0).item<int64_t>(), 1);
}

TEST(ReduceMaxDim, HalfAndIntegerTypes) {
  for (DType dt : {DType::bfloat16, DType::float16, DType::int32, DType::uint8}) {
    auto [v, i] = max_dim(sample(dt), 0);
    EXPECT_EQ(v.dtype(), dt);
    EXPECT_TRUE(near(v, {3, 5, 9})) << dtype_name(dt);
    EXPECT_EQ(ints(i), (std::vector<int64_t>{0, 1, 1}));
  }
}

TEST(ReduceMaxDim, ArgmaxMethodAndKeepdim) {
  Tensor i = sample().argmax(0, /*keepdim=*/true);
  EXPECT_EQ(i.shape(), (Shape{1, 3}));
  EXPECT_EQ(ints(i), (std::vector<int64_t>{0, 1, 1}));
  EXPECT_FALSE(i.requires_grad());
}

TEST(ReduceMaxDim, ZeroDimTensor) {
  Tensor x = scalar_tensor(2.5, DType::float64);
  auto [v, i] = max_dim(x, 0);
  EXPECT_EQ(v.shape(), Shape{});
  EXPECT_TRUE(near(v, {2.5}));
  EXPECT_EQ(i.item<int64_t>(), 0);
  EXPECT_TRUE(near(amax(x), {2.5}));
}

TEST(ReduceAmax, GradientSplitsEvenlyAmongTies) {
  Tensor x = tensor(std::vector<double>{1, 3, 3, 2, 0, 0}, {2, 3}).requires_grad_();
  sum(amax(x, {1})).backward();
  EXPECT_TRUE(near(x.grad(), {0, 0.5, 0.5, 1, 0, 0}));
  Tensor y = tensor(std::vector<double>{1, 3, 3, 2, 0, 0}, {2, 3}).requires_grad_();
  sum(amin(y, {1})).backward();
  EXPECT_TRUE(near(y.grad(), {1, 0, 0, 0, 0.5, 0.5}));
  Tensor z = tensor(std::vector<double>{4, 4, 1, 4}, {4}).requires_grad_();
  amax(z).backward();
  EXPECT_TRUE(near(z.grad(), {1.0 / 3, 1.0 / 3, 0, 1.0 / 3}));
}

TEST(ReduceMaxDim, GradientGoesToTheReturnedIndexOnly) {
  Tensor x = tensor(std::vector<double>{1, 3, 3, 2, 0, 0}, {2, 3}).requires_grad_();
  sum(max_dim(x, 1).first).backward();
  EXPECT_TRUE(near(x.grad(), {0, 1, 0, 1, 0, 0}));
  Tensor y = tensor(std::vector<double>{1, 3, 3, 2, 0, 0}, {2, 3}).requires_grad_();
  sum(min_dim(y, 1, true).first).backward();
  EXPECT_TRUE(near(y.grad(), {1, 0, 0, 0, 1, 0}));
}

TEST(ReduceAmax, Gradcheck) {
  for (bool nc : {false, true}) {
    Tensor x = random_leaf({3, 4}, nc);
    EXPECT_TRUE(grad_ok([](const std::vector<Tensor>& in) { return amax(in[0], {1}); }, {x}));
    EXPECT_TRUE(grad_ok([](const std::vector<Tensor>& in) { return amin(in[0], {0}, true); }, {x}));
    EXPECT_TRUE(grad_ok([](const std::vector<Tensor>& in) { return amax(in[0]); }, {x}));
  }
}

TEST(ReduceMaxDim, Gradcheck) {
  for (bool nc : {false, true}) {
    Tensor x = random_leaf({2, 3, 4}, nc);
    for (int64_t d : {0, 1, 2}) {
      EXPECT_TRUE(grad_ok([d](const std::vector<Tensor>& in) { return max_dim(in[0], d).first; }, {x}));
      EXPECT_TRUE(grad_ok([d](const std::vector<Tensor>& in) { return min_dim(in[0], d, true).first; }, {x}));
    }
  }
}

}  // namespace
}  // namespace hearth
