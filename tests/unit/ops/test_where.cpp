#include <cmath>
#include <limits>

#include <gtest/gtest.h>

#include "hearth/autograd/grad_mode.h"
#include "hearth/autograd/node.h"
#include "tests/unit/ops/elementwise_testing.h"

namespace hearth {
namespace {

using test::grad_ok;
using test::leaf;
using test::throws_with;
using test::values_near;

Tensor mask(std::vector<bool> v, const Shape& shape) { return tensor(v, shape); }

TEST(Where, SelectsWithBroadcasting) {
  Tensor cond = mask({true, false, true}, {3});
  Tensor a = tensor(std::vector<float>{1, 2, 3, 4, 5, 6}, {2, 3});
  Tensor b = tensor(std::vector<float>{-1, -2}, {2, 1});
  Tensor y = where(cond, a, b);
  EXPECT_EQ(y.shape(), (Shape{2, 3}));
  EXPECT_TRUE(values_near(y, {1, -1, 3, 4, -2, 6}));
}

TEST(Where, TypePromotion) {
  Tensor cond = mask({true, false}, {2});
  Tensor i = tensor(std::vector<int64_t>{1, 2});
  Tensor f = tensor({0.5f, 1.5f});
  EXPECT_EQ(where(cond, i, f).dtype(), DType::float32);
  EXPECT_TRUE(values_near(where(cond, i, f), {1, 1.5}));
  EXPECT_EQ(where(cond, i, 0).dtype(), DType::int64);
  EXPECT_EQ(where(cond, i, 0.5).dtype(), DType::float32);  // a float scalar lifts an integer tensor
  Tensor d = tensor(std::vector<double>{1, 2});
  EXPECT_EQ(where(cond, d, 0).dtype(), DType::float64);
  EXPECT_EQ(where(cond, f, d).dtype(), DType::float64);
  Tensor h = tensor({1.f, 2.f}).to(DType::bfloat16);
  EXPECT_EQ(where(cond, h, 0.0).dtype(), DType::bfloat16);
  EXPECT_TRUE(values_near(where(cond, h, -3.0), {1, -3}));
}

TEST(Where, ScalarFillAndEmpty) {
  Tensor cond = mask({false, true, false}, {3});
  Tensor x = tensor({1.f, 2.f, 3.f});
  EXPECT_TRUE(values_near(where(cond, x, -std::numeric_limits<double>::infinity()),
                          {-std::numeric_limits<double>::infinity(), 2, -std::numeric_limits<double>::infinity()}));
  EXPECT_EQ(where(mask({}, {0}), zeros({0}), 1.0).numel(), 0);
}

TEST(Where, NonContiguousOperands) {
  Tensor m = tensor(std::vector<double>{1, 2, 3, 4}, {2, 2});
  Tensor cond = mask({true, false, false, true}, {2, 2});
  EXPECT_TRUE(values_near(where(transpose(cond, 0, 1), transpose(m, 0, 1), m), {1, 2, 3, 4}));
  EXPECT_TRUE(values_near(where(cond, transpose(m, 0, 1), 0), {1, 0, 0, 4}));
}

TEST(Where, BadInputs) {
  Tensor x = zeros({3});
  EXPECT_TRUE(throws_with<TypeError>([&] { where(ones({3}), x, x); }, "bool"));
  EXPECT_TRUE(throws_with<ShapeError>([&] { where(mask({true, false}, {2}), x, x); }, "[where]"));
  EXPECT_TRUE(throws_with<ValueError>([&] { where(Tensor(), x, x); }, "[where]"));
}

TEST(Where, GradientGoesToTheChosenBranch) {
  Tensor cond = mask({true, false, true}, {3});
  Tensor a = tensor({1.f, 2.f, 3.f}).requires_grad_();
  Tensor b = tensor(std::vector<float>{10}, {1}).requires_grad_();
  sum(mul(where(cond, a, b), 2)).backward();
  EXPECT_TRUE(values_near(a.grad(), {2, 0, 2}));
  EXPECT_TRUE(values_near(b.grad(), {2}));  // broadcast: summed back to shape [1]
}

TEST(Where, Gradcheck) {
  Tensor cond = mask({true, false, false, true, true, false}, {2, 3});
  for (bool transposed : {false, true}) {
    SCOPED_TRACE(transposed ? "transposed" : "contiguous");
    Tensor a = leaf(test::spread(6, 0.1, 2), {2, 3}, transposed);
    Tensor b = leaf(test::spread(3, 0.1, 2), {1, 3}, transposed);
    EXPECT_TRUE(grad_ok([&](const std::vector<Tensor>& in) { return where(cond, in[0], in[1]); }, {a, b}));
    EXPECT_TRUE(grad_ok([&](const std::vector<Tensor>& in) { return where(cond, in[0], 0.5); }, {a}));
  }
}

TEST(MaskedFill, FillsWhereTheMaskIsTrue) {
  Tensor x = tensor(std::vector<float>{1, 2, 3, 4, 5, 6}, {2, 3});
  Tensor m = mask({true, false, true}, {3});
  Tensor y = masked_fill(x, m, -1);
  EXPECT_TRUE(values_near(y, {-1, 2, -1, -1, 5, -1}));
  EXPECT_TRUE(values_near(x, {1, 2, 3, 4, 5, 6}));  // out of place
  Tensor big_mask = mask({true, false, false, false, false, true}, {2, 3});
  EXPECT_EQ(masked_fill(tensor({7.f, 8.f, 9.f}), big_mask, 0).shape(), (Shape{2, 3}));
}

TEST(MaskedFill, KeepsTheTensorsDtype) {
  Tensor i = tensor(std::vector<int64_t>{1, 2, 3});
  Tensor m = mask({false, true, false}, {3});
  Tensor y = masked_fill(i, m, 7.9);  // the value is converted, not the tensor promoted
  EXPECT_EQ(y.dtype(), DType::int64);
  EXPECT_EQ(y.to_vector<int64_t>(), (std::vector<int64_t>{1, 7, 3}));
  Tensor h = tensor({1.f, 2.f}).to(DType::float16);
  Tensor yh = masked_fill(h, mask({true, false}, {2}), -std::numeric_limits<double>::infinity());
  EXPECT_EQ(yh.dtype(), DType::float16);
  EXPECT_TRUE(std::isinf(yh.to_vector<float>()[0]));
}

TEST(MaskedFill, GradientIsZeroWhereFilled) {
  Tensor x = tensor({1.f, 2.f, 3.f}).requires_grad_();
  Tensor y = masked_fill(x, mask({false, true, false}, {3}), 5);
  EXPECT_EQ(y.grad_fn()->name(), "MaskedFillBackward");
  sum(y).backward();
  EXPECT_TRUE(values_near(x.grad(), {1, 0, 1}));
  for (bool transposed : {false, true}) {
    Tensor a = leaf(test::spread(6, 0.1, 2), {2, 3}, transposed);
    Tensor m = mask({true, false, true}, {3});
    EXPECT_TRUE(grad_ok([&](const std::vector<Tensor>& in) { return masked_fill(in[0], m, 0.25); }, {a}));
  }
}

TEST(MaskedFill, InPlace) {
  Tensor x = tensor(std::vector<float>{1, 2, 3, 4}, {2, 2});
  uint32_t v0 = x.version();
  const Tensor& r = masked_fill_(x, mask({false, true}, {2}), 9);
  EXPECT_TRUE(r.is_same(x));
  EXPECT_TRUE(values_near(x, {1, 9, 3, 9}));
  EXPECT_GT(x.version(), v0);
  // Writes through a strided view into its base.
  Tensor base = zeros({2, 2});
  masked_fill_(transpose(base, 0, 1), mask({true, false, false, false}, {2, 2}), 1);
  masked_fill_(transpose(base, 0, 1), mask({false, true, false, false}, {2, 2}), 2);
  EXPECT_TRUE(values_near(base, {1, 0, 2, 0}));
}

TEST(MaskedFill, BadInputs) {
  Tensor x = zeros({2, 2});
  EXPECT_TRUE(throws_with<TypeError>([&] { masked_fill(x, ones({2, 2}), 1); }, "[masked_fill]"));
  EXPECT_TRUE(throws_with<ShapeError>([&] { masked_fill_(x, mask({true, false}, {2, 1, 1}), 1); }, "[masked_fill_]"));
  Tensor leaf_x = zeros({2}).requires_grad_();
  EXPECT_THROW(masked_fill_(leaf_x, mask({true, false}, {2}), 1), AutogradError);
  NoGradGuard no_grad;  // as optimizers do
  masked_fill_(leaf_x, mask({true, false}, {2}), 1);
  EXPECT_TRUE(values_near(leaf_x, {1, 0}));
}

}  // namespace
}  // namespace hearth
