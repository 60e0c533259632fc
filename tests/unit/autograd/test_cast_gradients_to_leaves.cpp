// A cast's backward hands a leaf's AccumulateGrad its gradient uncast, and
// AccumulateGrad casts while it writes .grad: the results are the cast-then-
// accumulate path's, one pass fewer.
#include <gtest/gtest.h>

#include "hearth/autograd/grad_mode.h"
#include "hearth/core/generator.h"
#include "hearth/ops/elementwise.h"
#include "hearth/ops/factory.h"
#include "hearth/ops/linalg.h"
#include "hearth/ops/reduction.h"
#include "hearth/ops/view.h"

namespace hearth {
namespace {

void expect_equal(const Tensor& got, const Tensor& want) {
  ASSERT_EQ(got.dtype(), want.dtype());
  ASSERT_EQ(got.shape(), want.shape());
  EXPECT_EQ(contiguous(got).to_vector<float>(), contiguous(want).to_vector<float>());
}

// d sum(x_b @ cast(w, bf16) * v) / dw = cast(x_b^T @ v, f32), in bfloat16 then widened.
struct Case {
  Tensor x, v, w;
  Case() {
    manual_seed(11);
    x = cast(randn({6, 5}), DType::bfloat16);
    v = cast(randn({6, 4}), DType::bfloat16);
    w = randn({5, 4}).requires_grad_();
  }
  Tensor loss(const Tensor& w_cast) const { return sum(cast(mul(mm(x, w_cast), v), DType::float32)); }
  Tensor expected() const { return cast(mm(transpose(x, 0, 1), v), DType::float32); }
};

TEST(CastGradientsToLeaves, AFloat32LeafGetsItsGradientInFloat32) {
  Case c;
  c.loss(cast(c.w, DType::bfloat16)).backward();
  expect_equal(c.w.grad(), c.expected());
}

TEST(CastGradientsToLeaves, AZeroedGradIsOverwrittenInItsOwnMemory) {
  Case c;
  c.loss(cast(c.w, DType::bfloat16)).backward();
  const void* memory = c.w.grad().data_ptr();
  c.w.zero_grad_(/*set_to_none=*/false);
  c.loss(cast(c.w, DType::bfloat16)).backward();
  EXPECT_EQ(c.w.grad().data_ptr(), memory);
  expect_equal(c.w.grad(), c.expected());
  // A second backward adds in float32.
  c.loss(cast(c.w, DType::bfloat16)).backward();
  expect_equal(c.w.grad(), add(c.expected(), c.expected()));
}

TEST(CastGradientsToLeaves, TwoCastsOfOneLeafAreSummedInTheLeafsDtype) {
  // Each gradient widened first, then added in float32 (as a cast's backward
  // that cast would have given), not added in bfloat16.
  Case c;
  Tensor a = cast(c.w, DType::bfloat16), b = cast(c.w, DType::bfloat16);
  add(c.loss(a), c.loss(b)).backward();
  expect_equal(c.w.grad(), add(c.expected(), c.expected()));
}

TEST(CastGradientsToLeaves, ALeafAlsoUsedDirectlyGetsBothContributions) {
  Case c;
  Tensor direct = sum(mul(c.w, 2.0));
  add(c.loss(cast(c.w, DType::bfloat16)), direct).backward();
  expect_equal(c.w.grad(), add(c.expected(), full({5, 4}, 2.0, DType::float32)));
}

TEST(CastGradientsToLeaves, ANonLeafStillGetsItsOwnDtype) {
  // Only AccumulateGrad takes other dtypes: a cast feeding another formula
  // casts back first, so the product's backward multiplies in float32 (in
  // bfloat16, g * 3 would round).
  Case c;
  c.loss(cast(mul(c.w, 3.0), DType::bfloat16)).backward();
  expect_equal(c.w.grad(), mul(c.expected(), 3.0));
}

}  // namespace
}  // namespace hearth
