// scaled_dot_product_attention against a float64 loop, masking, dropout and gradients.
#include <cmath>
#include <limits>
#include <vector>

#include <gtest/gtest.h>

#include "hearth/autograd/gradcheck.h"
#include "hearth/core/generator.h"
#include "hearth/ops/attention.h"
#include "hearth/ops/elementwise.h"
#include "hearth/ops/factory.h"
#include "hearth/ops/reduction.h"
#include "hearth/ops/view.h"

namespace hearth {
namespace {

// softmax(q k^T * scale + mask) v for q [L, D], k [S, D], v [S, Dv], mask [S] (added to every row).
std::vector<double> reference(const std::vector<double>& q, const std::vector<double>& k, const std::vector<double>& v,
                              const std::vector<double>& mask, int64_t L, int64_t S, int64_t D, int64_t Dv) {
  const double scale = 1.0 / std::sqrt(static_cast<double>(D));
  std::vector<double> out(L * Dv, 0.0);
  for (int64_t i = 0; i < L; ++i) {
    std::vector<double> w(S);
    double mx = -INFINITY, total = 0;
    for (int64_t j = 0; j < S; ++j) {
      double dot = 0;
      for (int64_t d = 0; d < D; ++d) dot += q[i * D + d] * k[j * D + d];
      w[j] = dot * scale + mask[j];
      mx = std::max(mx, w[j]);
    }
    for (double& x : w) total += (x = std::exp(x - mx));
    for (int64_t j = 0; j < S; ++j)
      for (int64_t e = 0; e < Dv; ++e) out[i * Dv + e] += w[j] / total * v[j * Dv + e];
  }
  return out;
}

TEST(OpsAttention, MatchesTheDefinitionWithAMask) {
  manual_seed(3);
  const int64_t L = 3, S = 5, D = 4, Dv = 6;
  Tensor q = randn({L, D}, DType::float64), k = randn({S, D}, DType::float64), v = randn({S, Dv}, DType::float64);
  const std::vector<double> mask_values = {0, 0, -1e9, 0, -0.5};
  Tensor mask = tensor(mask_values, {1, S});
  const std::vector<double> want =
      reference(q.to_vector<double>(), k.to_vector<double>(), v.to_vector<double>(), mask_values, L, S, D, Dv);
  const std::vector<double> got = scaled_dot_product_attention(q, k, v, mask).to_vector<double>();
  ASSERT_EQ(got.size(), want.size());
  for (size_t i = 0; i < got.size(); ++i) EXPECT_NEAR(got[i], want[i], 1e-12) << i;
}

TEST(OpsAttention, BatchedHeadsAndMaskedKeysGetNoWeight) {
  manual_seed(4);
  // [B=2, heads=3, S=4, D=8]; the last key of batch 0 is masked with float's lowest.
  Tensor q = randn({2, 3, 4, 8}), k = randn({2, 3, 4, 8}), v = randn({2, 3, 4, 8});
  const float low = std::numeric_limits<float>::lowest();
  Tensor mask = tensor(std::vector<float>{0, 0, 0, low, 0, 0, 0, 0}, {2, 1, 1, 4});
  Tensor out = scaled_dot_product_attention(q, k, v, mask);
  EXPECT_EQ(out.shape(), (Shape{2, 3, 4, 8}));
  // Batch 0 equals attention over its first three keys alone.
  Tensor first3 =
      scaled_dot_product_attention(select(q, 0, 0), narrow(select(k, 0, 0), 1, 0, 3), narrow(select(v, 0, 0), 1, 0, 3));
  EXPECT_LT(abs(sub(select(out, 0, 0), first3)).max().item<double>(), 1e-6);
  // Batch 1 is unmasked.
  EXPECT_LT(abs(sub(select(out, 0, 1), scaled_dot_product_attention(select(q, 0, 1), select(k, 0, 1), select(v, 0, 1))))
                .max()
                .item<double>(),
            1e-6);
  // A float64 mask is cast to the operands' dtype.
  EXPECT_EQ(scaled_dot_product_attention(q, k, v, zeros({4}, DType::float64)).dtype(), DType::float32);
}

TEST(OpsAttention, DropoutOnlyWhileTraining) {
  manual_seed(5);
  Tensor q = randn({2, 6, 4}), k = randn({2, 6, 4}), v = randn({2, 6, 4});
  Tensor plain = scaled_dot_product_attention(q, k, v);
  EXPECT_EQ(abs(sub(scaled_dot_product_attention(q, k, v, Tensor(), 0.5, false), plain)).max().item<double>(), 0.0);
  EXPECT_GT(abs(sub(scaled_dot_product_attention(q, k, v, Tensor(), 0.5, true), plain)).max().item<double>(), 1e-3);
  // A custom scale.
  Tensor scaled = scaled_dot_product_attention(q, k, v, Tensor(), 0.0, false, 1.0);
  EXPECT_GT(abs(sub(scaled, plain)).max().item<double>(), 1e-4);
}

TEST(OpsAttention, GradcheckFloat64) {
  manual_seed(6);
  Tensor q = randn({2, 3, 4}, DType::float64).requires_grad_();
  Tensor k = randn({2, 5, 4}, DType::float64).requires_grad_();
  Tensor v = randn({2, 5, 3}, DType::float64).requires_grad_();
  Tensor mask = randn({1, 1, 5}, DType::float64).requires_grad_();
  GradcheckResult r =
      gradcheck([](const std::vector<Tensor>& x) { return scaled_dot_product_attention(x[0], x[1], x[2], x[3]); },
                {q, k, v, mask});
  EXPECT_TRUE(r.ok) << r.message;
  // Non-contiguous operands: k given as a transposed view.
  Tensor kt = randn({2, 4, 5}, DType::float64).requires_grad_();
  r = gradcheck(
      [](const std::vector<Tensor>& x) { return scaled_dot_product_attention(x[0], transpose(x[1], 1, 2), x[2]); },
      {q, kt, v});
  EXPECT_TRUE(r.ok) << r.message;
}

TEST(OpsAttention, ErrorsNameTheOperands) {
  Tensor q = randn({2, 3, 4});
  EXPECT_THROW(scaled_dot_product_attention(q, randn({2, 3, 5}), randn({2, 3, 4})), ShapeError);
  EXPECT_THROW(scaled_dot_product_attention(q, randn({2, 5, 4}), randn({2, 4, 4})), ShapeError);
  EXPECT_THROW(scaled_dot_product_attention(q, randn({2, 3, 4}, DType::float64), randn({2, 3, 4})), TypeError);
  EXPECT_THROW(scaled_dot_product_attention(q, q, q, ones({3}, DType::int64)), TypeError);
  EXPECT_THROW(scaled_dot_product_attention(q, q, q, Tensor(), 1.0, true), ValueError);
  EXPECT_THROW(scaled_dot_product_attention(randn({4}), q, q), ShapeError);
}

}  // namespace
}  // namespace hearth
