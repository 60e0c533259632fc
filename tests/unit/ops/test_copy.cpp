#include <cmath>
#include <cstdint>

#include <gtest/gtest.h>

#include "hearth/autograd/grad_mode.h"
#include "tests/unit/ops/elementwise_testing.h"

namespace hearth {
namespace {

using test::throws_with;
using test::values_near;

TEST(Copy, BetweenDtypes) {
  Tensor src = tensor({-1.75f, 0.f, 2.5f, 300.f});
  Tensor i = empty({4}, DType::int64);
  copy_(i, src);
  EXPECT_EQ(i.to_vector<int64_t>(), (std::vector<int64_t>{-1, 0, 2, 300}));  // truncation toward zero
  Tensor b = empty({4}, DType::bool_);
  copy_(b, src);
  EXPECT_EQ(test::bools(b), (std::vector<bool>{true, false, true, true}));
  Tensor f = empty({2}, DType::float64);
  copy_(f, tensor(std::vector<bool>{true, false}));
  EXPECT_TRUE(values_near(f, {1, 0}));
  Tensor h = empty({4}, DType::bfloat16);
  copy_(h, src);
  EXPECT_TRUE(values_near(h, {-1.75, 0, 2.5, 300}));
  Tensor back = empty({4}, DType::float16);
  copy_(back, h);  // half to half through float
  EXPECT_TRUE(values_near(back, {-1.75, 0, 2.5, 300}));
}

TEST(Copy, IntoAStridedDestination) {
  Tensor base = zeros({2, 3});
  copy_(transpose(base, 0, 1), tensor(std::vector<float>{1, 2, 3, 4, 5, 6}, {3, 2}));
  EXPECT_TRUE(values_near(base, {1, 3, 5, 2, 4, 6}));
  Tensor cols = slice(base, 1, 0, 3, 2);  // columns 0 and 2
  copy_(cols, zeros({2, 2}));
  EXPECT_TRUE(values_near(base, {0, 3, 0, 0, 4, 0}));
}

TEST(Copy, BroadcastsTheSource) {
  Tensor dst = zeros({2, 3}, DType::float64);
  copy_(dst, tensor(std::vector<float>{7, 8, 9}, {3}));
  EXPECT_TRUE(values_near(dst, {7, 8, 9, 7, 8, 9}));
  EXPECT_TRUE(throws_with<ShapeError>([&] { copy_(dst, zeros({2})); }, "[copy_]"));
  EXPECT_TRUE(throws_with<ShapeError>([&] { copy_(zeros({3}), zeros({2, 3})); }, "[copy_]"));
}

TEST(Copy, BumpsTheVersionAndRefusesGradLeaves) {
  Tensor dst = zeros({2});
  uint32_t v0 = dst.version();
  dst.copy_(ones({2}));
  EXPECT_GT(dst.version(), v0);
  Tensor w = zeros({2}).requires_grad_();
  EXPECT_THROW(copy_(w, ones({2})), AutogradError);
  {
    NoGradGuard no_grad;
    copy_(w, ones({2}));
  }
  EXPECT_TRUE(values_near(w, {1, 1}));
}

TEST(Copy, EmptyIsANoOp) {
  Tensor dst = zeros({0, 2});
  EXPECT_TRUE(copy_(dst, zeros({0, 2})).is_same(dst));
}

TEST(Cast, ConvertsAndIsDifferentiableBetweenFloats) {
  Tensor x = tensor({1.5f, -2.5f}).requires_grad_();
  Tensor y = cast(x, DType::float64);
  EXPECT_EQ(y.dtype(), DType::float64);
  sum(mul(y, y)).backward();
  EXPECT_EQ(x.grad().dtype(), DType::float32);
  EXPECT_TRUE(values_near(x.grad(), {3, -5}));
  EXPECT_TRUE(cast(x, DType::float32).is_same(x));  // same dtype: the tensor itself
  Tensor i = cast(x, DType::int32);
  EXPECT_EQ(i.to_vector<int32_t>(), (std::vector<int32_t>{1, -2}));
  EXPECT_FALSE(i.requires_grad());
  EXPECT_EQ(x.to(DType::bfloat16).dtype(), DType::bfloat16);
}

TEST(Cast, NonContiguousInputKeepsLogicalOrder) {
  Tensor m = tensor(std::vector<double>{1, 2, 3, 4, 5, 6}, {2, 3});
  Tensor c = cast(transpose(m, 0, 1), DType::int64);
  EXPECT_TRUE(c.is_contiguous());
  EXPECT_EQ(c.to_vector<int64_t>(), (std::vector<int64_t>{1, 4, 2, 5, 3, 6}));
}

TEST(Contiguous, CopiesOnlyWhenNeeded) {
  Tensor m = tensor(std::vector<float>{1, 2, 3, 4, 5, 6}, {2, 3});
  EXPECT_TRUE(contiguous(m).is_same(m));
  Tensor t = transpose(m, 0, 1);
  Tensor c = contiguous(t);
  EXPECT_TRUE(c.is_contiguous());
  EXPECT_EQ(c.shape(), (Shape{3, 2}));
  EXPECT_TRUE(values_near(c, {1, 4, 2, 5, 3, 6}));
  EXPECT_NE(c.storage(), m.storage());
  Tensor x = tensor(std::vector<float>{1, 2, 3, 4}, {2, 2}).requires_grad_();
  Tensor xc = transpose(x, 0, 1).contiguous();
  sum(mul(xc, tensor(std::vector<float>{1, 2, 3, 4}, {2, 2}))).backward();
  EXPECT_TRUE(values_near(x.grad(), {1, 3, 2, 4}));
}

TEST(Clone, IsADeepCopyWithGradient) {
  Tensor x = tensor({1.f, 2.f}).requires_grad_();
  Tensor y = x.clone();
  EXPECT_NE(y.storage(), x.storage());
  sum(mul(y, 3)).backward();
  EXPECT_TRUE(values_near(x.grad(), {3, 3}));
}

}  // namespace
}  // namespace hearth
