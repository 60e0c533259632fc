#include <gtest/gtest.h>

#include "hearth/core/generator.h"
#include "hearth/nn/embedding.h"
#include "hearth/ops/factory.h"
#include "hearth/ops/nn_functional.h"
#include "hearth/ops/reduction.h"
#include "hearth/ops/view.h"
#include "tests/unit/nn/nn_testing.h"

namespace hearth {
namespace {

using nn::Embedding;

TEST(NnEmbedding, InitIsStandardNormal) {
  manual_seed(0);
  Embedding emb(1000, 64);
  auto m = testing::moments_of(emb.weight);
  EXPECT_NEAR(m.mean, 0.0, 0.01);
  EXPECT_NEAR(m.std, 1.0, 0.01);
}

TEST(NnEmbedding, ForwardLooksUpRows) {
  Embedding emb(6, 3);
  Tensor idx = tensor(std::vector<int64_t>{5, 0, 2, 2}, {2, 2});
  Tensor y = emb.forward(idx);
  EXPECT_EQ(y.shape(), (Shape{2, 2, 3}));
  testing::expect_close(y, embedding(idx, emb.weight), 0);
  testing::expect_close(select(select(y, 0, 0), 0, 0), select(emb.weight, 0, 5), 0);
  EXPECT_EQ(emb.extra_repr(), "6, 3");
}

TEST(NnEmbedding, PaddingRowIsZeroAndGetsNoGradient) {
  Embedding emb(5, 4, -1);  // counts from the end: row 4
  ASSERT_TRUE(emb.padding_idx.has_value());
  EXPECT_EQ(*emb.padding_idx, 4);
  EXPECT_EQ(select(emb.weight, 0, 4).to_vector<float>(), std::vector<float>(4, 0.0f));
  EXPECT_TRUE(emb.weight.requires_grad());
  Tensor idx = tensor(std::vector<int64_t>{4, 1, 4});
  sum(emb.forward(idx)).backward();
  EXPECT_EQ(select(emb.weight.grad(), 0, 4).to_vector<float>(), std::vector<float>(4, 0.0f));
  EXPECT_EQ(select(emb.weight.grad(), 0, 1).to_vector<float>(), std::vector<float>(4, 1.0f));
  EXPECT_EQ(emb.extra_repr(), "5, 4, padding_idx=4");
}

TEST(NnEmbedding, BadArguments) {
  EXPECT_THROW(Embedding(5, 4, 5), ValueError);
  EXPECT_THROW(Embedding(5, 4, -6), ValueError);
  EXPECT_THROW(Embedding(-1, 4), ValueError);
  Embedding emb(5, 4);
  EXPECT_THROW(emb.forward(tensor(std::vector<int64_t>{7})), ValueError);
  EXPECT_THROW(emb.forward(zeros({2})), TypeError);
}

}  // namespace
}  // namespace hearth
