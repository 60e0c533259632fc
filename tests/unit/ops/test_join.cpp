#include <gtest/gtest.h>

#include "hearth/ops/elementwise.h"
#include "hearth/ops/indexing.h"
#include "hearth/ops/reduction.h"
#include "tests/unit/ops/reduction_testing.h"

namespace hearth {
namespace {

using red_test::grad_ok;
using red_test::near;
using red_test::random_leaf;
using red_test::throws_with;

TEST(Cat, AlongEachDim) {
  Tensor a = red_test::seq({2, 2});                            // [[0,1],[2,3]]
  Tensor b = add(red_test::seq({1, 2}), 10.0);                 // [[10,11]]
  Tensor c = cat({a, b}, 0);
  EXPECT_EQ(c.shape(), (Shape{3, 2}));
  EXPECT_TRUE(near(c, {0, 1, 2, 3, 10, 11}));
  Tensor d = cat({a, transpose(a, 0, 1)}, -1);                 // non-contiguous input
  EXPECT_EQ(d.shape(), (Shape{2, 4}));
  EXPECT_TRUE(near(d, {0, 1, 0, 2, 2, 3, 1, 3}));
  EXPECT_TRUE(near(cat({a}, 1), {0, 1, 2, 3}));
}

TEST(Cat, PromotesDtypes) {
  Tensor i = tensor(std::vector<int64_t>{1, 2}, {2});
  Tensor f = tensor(std::vector<float>{0.5f}, {1});
  Tensor c = cat({i, f});
  EXPECT_EQ(c.dtype(), DType::float32);
  EXPECT_TRUE(near(c, {1, 2, 0.5}));
  Tensor h = cat({ones({2}, DType::bfloat16), ones({1}, DType::bfloat16)});
  EXPECT_EQ(h.dtype(), DType::bfloat16);
}

TEST(Cat, EmptyPieces) {
  Tensor a = red_test::seq({2, 2});
  EXPECT_TRUE(near(cat({a, zeros({0, 2}), a}, 0), {0, 1, 2, 3, 0, 1, 2, 3}));
  EXPECT_EQ(cat({a, zeros({2, 0})}, 1).shape(), (Shape{2, 2}));
  EXPECT_EQ(cat({zeros({0}), a}, 0).shape(), (Shape{2, 2}));  // legacy 1-D empty tensors are skipped
  EXPECT_EQ(cat({zeros({0}), zeros({0})}).shape(), Shape{0});
}

TEST(Cat, BadInputNamesTheTensor) {
  EXPECT_TRUE(throws_with<ValueError>([] { cat({}); }, "non-empty"));
  EXPECT_TRUE(throws_with<ShapeError>([] { cat({zeros({2, 3}), zeros({2, 4})}, 0); },
                                      "tensor 1 has shape [2, 4] but tensor 0 has shape [2, 3] (mismatch in dimension 1)"));
  EXPECT_TRUE(throws_with<ShapeError>([] { cat({zeros({2, 3}), zeros({2, 3}), zeros({3})}, 0); },
                                      "tensor 2 has shape [3]"));
  EXPECT_TRUE(throws_with<ShapeError>([] { cat({zeros({2}), zeros({2})}, 1); }, "[cat] dimension out of range"));
  EXPECT_TRUE(throws_with<ShapeError>([] { cat({scalar_tensor(1, DType::float32)}); }, "zero-dimensional"));
}

TEST(Cat, Gradcheck) {
  for (bool nc : {false, true}) {
    Tensor a = random_leaf({2, 3}, nc), b = random_leaf({1, 3}, nc), c = random_leaf({2, 2}, nc);
    EXPECT_TRUE(grad_ok([](const std::vector<Tensor>& in) { return cat({in[0], in[1]}, 0); }, {a, b}));
    EXPECT_TRUE(grad_ok([](const std::vector<Tensor>& in) { return cat({in[0], in[1], in[0]}, 1); }, {a, c}));
  }
}

TEST(Cat, GradientOnlyForInputsThatNeedIt) {
  Tensor a = ones({2}, DType::float64).requires_grad_();
  Tensor b = ones({3}, DType::float64);
  sum(mul(cat({a, b}), tensor(std::vector<double>{1, 2, 3, 4, 5}))).backward();
  EXPECT_TRUE(near(a.grad(), {1, 2}));
  EXPECT_FALSE(b.grad().defined());
}

TEST(Stack, NewDimAnywhere) {
  Tensor a = red_test::seq({2}), b = add(red_test::seq({2}), 5.0);  // [0,1], [5,6]
  Tensor s0 = stack({a, b});
  EXPECT_EQ(s0.shape(), (Shape{2, 2}));
  EXPECT_TRUE(near(s0, {0, 1, 5, 6}));
  Tensor s1 = stack({a, b}, 1);
  EXPECT_TRUE(near(s1, {0, 5, 1, 6}));
  EXPECT_EQ(stack({a, b, a}, -1).shape(), (Shape{2, 3}));
  EXPECT_TRUE(throws_with<ShapeError>([&] { stack({a, zeros({3})}); },
                                      "tensor 0 has shape [2] and tensor 1 has shape [3]"));
  EXPECT_TRUE(throws_with<ShapeError>([&] { stack({a, b}, 2); }, "dimension out of range"));
  EXPECT_TRUE(throws_with<ValueError>([] { stack({}); }, "non-empty"));
}

TEST(Stack, Gradcheck) {
  for (bool nc : {false, true}) {
    Tensor a = random_leaf({2, 3}, nc), b = random_leaf({2, 3}, nc);
    EXPECT_TRUE(grad_ok([](const std::vector<Tensor>& in) { return stack({in[0], in[1]}, 1); }, {a, b}));
  }
}

TEST(Split, BySizeAndBySizes) {
  Tensor x = red_test::seq({5, 2});
  std::vector<Tensor> parts = split(x, 2);
  ASSERT_EQ(parts.size(), 3u);
  EXPECT_EQ(parts[0].shape(), (Shape{2, 2}));
  EXPECT_EQ(parts[2].shape(), (Shape{1, 2}));
  EXPECT_TRUE(near(parts[2], {8, 9}));
  std::vector<Tensor> cols = split(x, 1, 1);
  ASSERT_EQ(cols.size(), 2u);
  EXPECT_TRUE(near(cols[1], {1, 3, 5, 7, 9}));
  std::vector<Tensor> uneven = split(x, std::vector<int64_t>{1, 0, 4});
  ASSERT_EQ(uneven.size(), 3u);
  EXPECT_EQ(uneven[1].shape(), (Shape{0, 2}));
  EXPECT_TRUE(near(uneven[2], {2, 3, 4, 5, 6, 7, 8, 9}));
  EXPECT_EQ(split(zeros({0, 2}), 3).size(), 1u);
}

TEST(Split, BadInput) {
  Tensor x = red_test::seq({5, 2});
  EXPECT_TRUE(throws_with<ValueError>([&] { split(x, std::vector<int64_t>{2, 2}); }, "sum to 4"));
  EXPECT_TRUE(throws_with<ValueError>([&] { split(x, std::vector<int64_t>{6, -1}); }, "non-negative"));
  EXPECT_TRUE(throws_with<ValueError>([&] { split(x, 0); }, "split_size must be positive"));
  EXPECT_TRUE(throws_with<ShapeError>([&] { split(x, 1, 2); }, "dimension out of range"));
}

TEST(Chunk, PyTorchSizes) {
  Tensor x = red_test::seq({5});
  std::vector<Tensor> c = chunk(x, 3);  // sizes 2, 2, 1
  ASSERT_EQ(c.size(), 3u);
  EXPECT_TRUE(near(c[2], {4}));
  EXPECT_EQ(chunk(red_test::seq({6}), 4).size(), 3u);  // chunk size 2: fewer chunks than asked
  EXPECT_EQ(chunk(x, 10).size(), 5u);
  EXPECT_EQ(chunk(zeros({0}), 3).size(), 3u);
  EXPECT_TRUE(throws_with<ValueError>([&] { chunk(x, 0); }, "must be positive"));
  std::vector<Tensor> rows = chunk(red_test::seq({2, 4}), 2, 1);
  EXPECT_TRUE(near(rows[1], {2, 3, 6, 7}));
}

TEST(Split, PiecesAreDifferentiableViews) {
  for (bool nc : {false, true}) {
    Tensor x = random_leaf({5, 3}, nc);
    EXPECT_TRUE(grad_ok([](const std::vector<Tensor>& in) { return split(in[0], 2)[1]; }, {x}));
    EXPECT_TRUE(grad_ok([](const std::vector<Tensor>& in) { return chunk(in[0], 2, 1)[0]; }, {x}));
    EXPECT_TRUE(grad_ok([](const std::vector<Tensor>& in) {
                  std::vector<Tensor> p = split(in[0], std::vector<int64_t>{1, 4});
                  return cat({p[1], p[0]});
                }, {x}));
  }
}

}  // namespace
}  // namespace hearth
