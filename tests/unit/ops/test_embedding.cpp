#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "hearth/autograd/gradcheck.h"
#include "hearth/ops/elementwise.h"
#include "hearth/ops/factory.h"
#include "hearth/ops/nn_functional.h"
#include "hearth/ops/reduction.h"
#include "hearth/ops/view.h"

namespace hearth {
namespace {

// Row v of the table is {10v, 10v + 1, 10v + 2}.
Tensor table(int64_t V, DType dtype = DType::float32) {
  std::vector<double> v;
  for (int64_t r = 0; r < V; ++r)
    for (int64_t d = 0; d < 3; ++d) v.push_back(10.0 * r + d);
  return cast(tensor(v, {V, 3}), dtype);
}

TEST(Embedding, GathersRowsForAnyIndexShape) {
  Tensor w = table(4);
  Tensor idx = tensor(std::vector<int64_t>{0, 2, 3, 0}, {2, 2});
  Tensor out = embedding(idx, w);
  EXPECT_EQ(out.shape(), (Shape{2, 2, 3}));
  EXPECT_EQ(out.to_vector<float>(), (std::vector<float>{0, 1, 2, 20, 21, 22, 30, 31, 32, 0, 1, 2}));
  Tensor scalar = embedding(scalar_tensor(1, DType::int64), w);
  EXPECT_EQ(scalar.shape(), (Shape{3}));
  EXPECT_EQ(scalar.to_vector<float>(), (std::vector<float>{10, 11, 12}));
}

TEST(Embedding, Int32AndStridedIndices) {
  Tensor w = table(5);
  Tensor idx32 = tensor(std::vector<int32_t>{4, 1});
  EXPECT_EQ(embedding(idx32, w).to_vector<float>(), (std::vector<float>{40, 41, 42, 10, 11, 12}));
  Tensor base = tensor(std::vector<int64_t>{0, 1, 2, 3, 4, 0}, {2, 3});
  Tensor idx = transpose(base, 0, 1);  // [[0, 3], [1, 4], [2, 0]]
  EXPECT_EQ(embedding(idx, w).to_vector<float>(),
            (std::vector<float>{0, 1, 2, 30, 31, 32, 10, 11, 12, 40, 41, 42, 20, 21, 22, 0, 1, 2}));
}

TEST(Embedding, EveryDtypeIsCopiedExactly) {
  Tensor idx = tensor(std::vector<int64_t>{2, 0});
  for (DType dt : {DType::float64, DType::bfloat16, DType::float16, DType::int64}) {
    Tensor out = embedding(idx, table(3, dt));
    EXPECT_EQ(out.dtype(), dt);
    EXPECT_EQ(out.to_vector<double>(), (std::vector<double>{20, 21, 22, 0, 1, 2}));
  }
}

TEST(Embedding, NonContiguousWeight) {
  Tensor wt = transpose(contiguous(transpose(table(4), 0, 1)), 0, 1);  // [4, 3] stored column-major
  ASSERT_FALSE(wt.is_contiguous());
  EXPECT_EQ(embedding(tensor(std::vector<int64_t>{3, 1}), wt).to_vector<float>(),
            (std::vector<float>{30, 31, 32, 10, 11, 12}));
}

TEST(Embedding, BackwardScatterAddsRepeatedIndices) {
  Tensor w = zeros({4, 2}).requires_grad_();
  Tensor idx = tensor(std::vector<int64_t>{1, 3, 1, 1}, {2, 2});
  Tensor g = tensor(std::vector<float>{1, 2, 3, 4, 5, 6, 7, 8}, {2, 2, 2});
  embedding(idx, w).backward(g);
  EXPECT_EQ(w.grad().to_vector<float>(), (std::vector<float>{0, 0, 1 + 5 + 7, 2 + 6 + 8, 0, 0, 3, 4}));
}

TEST(Embedding, PaddingRowGetsNoGradient) {
  Tensor w = ones({3, 2}).requires_grad_();
  Tensor idx = tensor(std::vector<int64_t>{0, 2, 0, 1});
  Tensor out = embedding(idx, w, /*padding_idx=*/0);
  EXPECT_EQ(out.to_vector<float>()[0], 1.f);  // the forward still reads the padding row
  sum(out).backward();
  EXPECT_EQ(w.grad().to_vector<float>(), (std::vector<float>{0, 0, 1, 1, 1, 1}));
}

TEST(Embedding, HalfBackwardAccumulatesInFloat) {
  Tensor w = zeros({2, 1}, DType::bfloat16).requires_grad_();
  std::vector<int64_t> many(300, 1);
  Tensor idx = tensor(many);
  // 300 ones summed in bfloat16 would stall at 256; in float the sum is exact.
  sum(embedding(idx, w)).backward();
  EXPECT_EQ(w.grad().dtype(), DType::bfloat16);
  EXPECT_EQ(w.grad().to_vector<double>(), (std::vector<double>{0, 300}));
}

TEST(Embedding, EmptyIndices) {
  Tensor w = randn({4, 3}).requires_grad_();
  Tensor out = embedding(tensor(std::vector<int64_t>{}, {0, 2}), w);
  EXPECT_EQ(out.shape(), (Shape{0, 2, 3}));
  sum(out).backward();
  EXPECT_EQ(w.grad().to_vector<float>(), std::vector<float>(12, 0.f));
}

TEST(Embedding, Gradcheck) {
  Tensor idx = tensor(std::vector<int64_t>{2, 0, 2, 4, 1, 2}, {3, 2});
  Tensor w = randn({5, 3}, DType::float64).requires_grad_();
  auto r = gradcheck([&](const std::vector<Tensor>& in) { return embedding(idx, in[0]); }, {w});
  EXPECT_TRUE(r.ok) << r.message;
  // padding row 3 is never looked up: the other rows' gradients are unaffected.
  auto rp = gradcheck([&](const std::vector<Tensor>& in) { return embedding(idx, in[0], 3); }, {w});
  EXPECT_TRUE(rp.ok) << rp.message;
  Tensor wt = transpose(randn({3, 5}, DType::float64), 0, 1);  // [5, 3], strided
  wt.requires_grad_();
  auto rt = gradcheck([&](const std::vector<Tensor>& in) { return embedding(idx, in[0]); }, {wt});
  EXPECT_TRUE(rt.ok) << rt.message;
}

TEST(Embedding, OutOfRangeIndexNamesIndexAndSize) {
  Tensor w = randn({4, 3});
  for (int64_t bad : {4, 9, -1}) {
    try {
      embedding(tensor(std::vector<int64_t>{0, bad}), w);
      FAIL() << "expected ValueError for index " << bad;
    } catch (const ValueError& e) {
      const std::string m = e.what();
      EXPECT_NE(m.find("[embedding] index " + std::to_string(bad)), std::string::npos) << m;
      EXPECT_NE(m.find("num_embeddings 4"), std::string::npos) << m;
    }
  }
}

TEST(Embedding, BadInput) {
  Tensor idx = tensor(std::vector<int64_t>{0});
  EXPECT_THROW(embedding(idx, randn({4})), ShapeError);
  EXPECT_THROW(embedding(tensor({0.f, 1.f}), randn({4, 2})), TypeError);
  EXPECT_THROW(embedding(idx, randn({4, 2}), 4), ValueError);
  EXPECT_THROW(embedding(idx, randn({4, 2}), -2), ValueError);
  EXPECT_THROW(embedding(Tensor(), randn({4, 2})), ValueError);
}

}  // namespace
}  // namespace hearth
