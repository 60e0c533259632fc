// Autocast: which ops produce which dtypes inside a region, gradients reaching
// float32 weights through the casts, the per-region cache of parameter casts,
// and the errors for a dtype or backend that cannot do mixed precision.
#include <cmath>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "hearth/autograd/grad_mode.h"
#include "hearth/core/generator.h"
#include "hearth/ops/attention.h"
#include "hearth/ops/autocast.h"
#include "hearth/ops/autocast_policy.h"
#include "hearth/ops/elementwise.h"
#include "hearth/ops/factory.h"
#include "hearth/ops/indexing.h"
#include "hearth/ops/linalg.h"
#include "hearth/ops/nn_functional.h"
#include "hearth/ops/reduction.h"
#include "hearth/ops/view.h"
#include "tests/support/test_device.h"

namespace hearth {
namespace {

// Largest |a - b| / (|b| + 1) over all elements, in float64.
double max_rel_diff(const Tensor& a, const Tensor& b) {
  std::vector<double> av = a.contiguous().to_vector<double>(), bv = b.contiguous().to_vector<double>();
  EXPECT_EQ(av.size(), bv.size());
  double worst = 0.0;
  for (size_t i = 0; i < av.size() && i < bv.size(); ++i)
    worst = std::max(worst, std::abs(av[i] - bv[i]) / (std::abs(bv[i]) + 1.0));
  return worst;
}

Tensor leaf(const Shape& shape, DType dtype = DType::float32) {
  Tensor t = randn(shape, dtype);
  t.requires_grad_();
  return t;
}

TEST(Autocast, ProductsRunInTheAutocastDtype) {
  manual_seed(1);
  Tensor a = randn({4, 5}), b = randn({5, 3}), w = randn({3, 5}), bias = randn({3});
  Tensor x = randn({2, 3, 8, 8}), k = randn({4, 3, 3, 3}), kb = randn({4});
  for (DType dt : {DType::bfloat16, DType::float16}) {
    AutocastGuard autocast(kCpu, dt);
    EXPECT_EQ(matmul(a, b).dtype(), dt);
    EXPECT_EQ(mm(a, b).dtype(), dt);
    EXPECT_EQ(bmm(a.unsqueeze(0), b.unsqueeze(0)).dtype(), dt);
    EXPECT_EQ(linear(a, w, bias).dtype(), dt);
    EXPECT_EQ(a.matmul(b).dtype(), dt);
    EXPECT_EQ(conv2d(x, k, kb, {1, 1}, {1, 1}).dtype(), dt);
    Tensor q = randn({2, 4, 6}), mask = zeros({4, 4});
    EXPECT_EQ(scaled_dot_product_attention(q, q, q, mask).dtype(), dt);
  }
  // The product of the cast inputs, so as close to float32 as the dtype allows.
  Tensor ref = matmul(a, b);
  AutocastGuard autocast(kCpu, DType::bfloat16);
  EXPECT_LT(max_rel_diff(matmul(a, b), ref), 3e-2);
}

TEST(Autocast, RangeSensitiveOpsRunInFloat32) {
  manual_seed(2);
  Tensor h = randn({4, 6}).to(DType::bfloat16);
  Tensor pos = add(abs(h), 0.5);
  Tensor target = tensor(std::vector<int64_t>{0, 5, 2, 3}, {4});
  AutocastGuard autocast(kCpu, DType::bfloat16);
  const std::vector<std::pair<std::string, Tensor>> results = {
      {"softmax", softmax(h, 1)},
      {"log_softmax", log_softmax(h, 1)},
      {"cross_entropy", cross_entropy(h, target)},
      {"nll_loss", nll_loss(h, target)},
      {"mse_loss", mse_loss(h, h)},
      {"layer_norm", layer_norm(h, {6})},
      {"sum", sum(h)},
      {"mean", mean(h, {1})},
      {"cumsum", cumsum(h, 1)},
      {"norm", norm(h)},
      {"var", var(h, {1})},
      {"std", hearth::std(h)},
      {"exp", exp(h)},
      {"log", log(pos)},
      {"rsqrt", rsqrt(pos)},
      {"pow", pow(h, 2)},
      {"pow(tensor)", pow(pos, h)},
  };
  for (const auto& [name, r] : results) EXPECT_EQ(r.dtype(), DType::float32) << name;
}

TEST(Autocast, OtherOpsKeepTheirInputsDtypeOrPromote) {
  manual_seed(3);
  Tensor h = randn({2, 3, 4, 4}).to(DType::bfloat16);
  Tensor f = randn({2, 3, 4, 4});
  AutocastGuard autocast(kCpu, DType::bfloat16);
  EXPECT_EQ(relu(h).dtype(), DType::bfloat16);
  EXPECT_EQ(gelu(h).dtype(), DType::bfloat16);
  EXPECT_EQ(max_pool2d(h, {2, 2}).dtype(), DType::bfloat16);
  EXPECT_EQ(add(h, f).dtype(), DType::float32);  // the widest input
  EXPECT_EQ(cat({h, f}, 0).dtype(), DType::float32);
  // scatter_add needs one dtype: the widest.
  Tensor index = zeros({2, 3, 4, 4}, DType::int64);
  EXPECT_EQ(scatter_add(h, 0, index, f).dtype(), DType::float32);
  // batch_norm normalises a half input in its own dtype, with float32 statistics.
  Tensor rm = zeros({3}), rv = ones({3}), w = ones({3}), b = zeros({3});
  Tensor y = batch_norm(h, rm, rv, w, b, /*training=*/true);
  EXPECT_EQ(y.dtype(), DType::bfloat16);
  EXPECT_EQ(rm.dtype(), DType::float32);
  EXPECT_GT(abs(rm).sum().item<double>(), 0.0);  // updated from the batch
}

TEST(Autocast, AttentionMasksStayFiniteInHalfTypes) {
  // Query 0 may attend nowhere: float32's lowest everywhere in its row, which
  // is -inf in both half types. It must average the values, as in float32.
  manual_seed(6);
  Tensor q = randn({1, 2, 4}), v = randn({1, 2, 4});
  Tensor mask = zeros({2, 2});
  {
    NoGradGuard no_grad;
    fill_(mask.narrow(0, 0, 1), lowest_finite(DType::float32));
  }
  Tensor ref = scaled_dot_product_attention(q, q, v, mask);
  for (DType dt : {DType::bfloat16, DType::float16}) {
    AutocastGuard autocast(kCpu, dt);
    Tensor out = scaled_dot_product_attention(q, q, v, mask);
    EXPECT_EQ(out.dtype(), dt);
    EXPECT_EQ(sum(logical_not(isfinite(out))).item<int64_t>(), 0) << dtype_name(dt);
    EXPECT_LT(max_rel_diff(out, ref), 2e-2) << dtype_name(dt);
  }
}

TEST(Autocast, Float64AndIntegerInputsAreLeftAlone) {
  Tensor a = randn({3, 3}, DType::float64);
  AutocastGuard autocast(kCpu, DType::bfloat16);
  EXPECT_EQ(matmul(a, a).dtype(), DType::float64);
  EXPECT_EQ(softmax(a, 0).dtype(), DType::float64);
  EXPECT_EQ(sum(arange(5)).dtype(), DType::int64);
}

TEST(Autocast, GuardsNestAndRestore) {
  Tensor a = randn({2, 2});
  EXPECT_FALSE(autocast_enabled(kCpu));
  EXPECT_FALSE(autocast_active());
  {
    AutocastGuard outer(kCpu, DType::bfloat16);
    EXPECT_TRUE(autocast_enabled(kCpu));
    EXPECT_EQ(autocast_dtype(kCpu), DType::bfloat16);
    EXPECT_FALSE(autocast_enabled(testing::test_device_kind()));
    {
      AutocastGuard off(kCpu, DType::bfloat16, /*enabled=*/false);
      EXPECT_FALSE(autocast_active());
      EXPECT_EQ(matmul(a, a).dtype(), DType::float32);
      {
        AutocastGuard half(kCpu, DType::float16);
        EXPECT_EQ(matmul(a, a).dtype(), DType::float16);
      }
      EXPECT_EQ(matmul(a, a).dtype(), DType::float32);
    }
    EXPECT_EQ(matmul(a, a).dtype(), DType::bfloat16);
    {
      AutocastSuspend suspend;
      EXPECT_EQ(matmul(a, a).dtype(), DType::float32);
    }
    EXPECT_EQ(matmul(a, a).dtype(), DType::bfloat16);
  }
  EXPECT_FALSE(autocast_enabled(kCpu));
  EXPECT_EQ(matmul(a, a).dtype(), DType::float32);
}

TEST(Autocast, GradientsReachFloat32WeightsInFloat32) {
  manual_seed(4);
  Tensor x = randn({8, 16});
  Tensor w = leaf({4, 16}), b = leaf({4});
  Tensor target = tensor(std::vector<int64_t>{0, 1, 2, 3, 0, 1, 2, 3}, {8});

  Tensor ref_loss = cross_entropy(linear(x, w, b), target);
  ref_loss.backward();
  Tensor ref_gw = w.grad().detach().clone(), ref_gb = b.grad().detach().clone();
  w.zero_grad_();
  b.zero_grad_();

  Tensor loss;
  {
    AutocastGuard autocast(kCpu, DType::bfloat16);
    Tensor logits = linear(x, w, b);
    EXPECT_EQ(logits.dtype(), DType::bfloat16);
    loss = cross_entropy(logits, target);
  }
  EXPECT_EQ(loss.dtype(), DType::float32);
  EXPECT_NEAR(loss.item<double>(), ref_loss.item<double>(), 2e-2);
  loss.backward();
  ASSERT_TRUE(w.grad().defined());
  EXPECT_EQ(w.grad().dtype(), DType::float32);
  EXPECT_EQ(b.grad().dtype(), DType::float32);
  EXPECT_LT(max_rel_diff(w.grad(), ref_gw), 2e-2);
  EXPECT_LT(max_rel_diff(b.grad(), ref_gb), 2e-2);
}

TEST(Autocast, HalfInputsOfFloat32OpsGetHalfGradients) {
  Tensor logits = leaf({3, 5}, DType::bfloat16);
  Tensor target = tensor(std::vector<int64_t>{1, 0, 4}, {3});
  Tensor loss;
  {
    AutocastGuard autocast(kCpu, DType::bfloat16);
    loss = cross_entropy(logits, target);
  }
  EXPECT_EQ(loss.dtype(), DType::float32);
  loss.backward();
  EXPECT_EQ(logits.grad().dtype(), DType::bfloat16);
}

TEST(Autocast, ParametersAreCastOncePerRegion) {
  manual_seed(5);
  Tensor x = randn({2, 3});
  Tensor w = leaf({4, 3});
  {
    AutocastGuard autocast(kCpu, DType::bfloat16);
    Tensor y = add(linear(x, w), linear(mul(x, 2.0), w));
    // x is an activation (not cached); w is cast once for both uses.
    EXPECT_EQ(autocast_cache_size(), 1u);
    sum(y).backward();
    // backward releases the casts' graph, so it empties the cache
    EXPECT_EQ(autocast_cache_size(), 0u);
  }
  // Gradient of sum(x w^T + 2x w^T) w.r.t. w: 3 * column sums of x, per row.
  Tensor expect = expand(mul(sum(x, {0}), 3.0).unsqueeze(0), {4, 3});
  EXPECT_LT(max_rel_diff(w.grad(), expect), 2e-2);
  EXPECT_EQ(autocast_cache_size(), 0u);
}

TEST(Autocast, CacheEmptiesWhenTheOutermostGuardCloses) {
  Tensor w = leaf({3, 3});
  {
    AutocastGuard outer(kCpu, DType::bfloat16);
    {
      AutocastGuard inner(kCpu, DType::bfloat16);
      (void)matmul(w, w);
      EXPECT_EQ(autocast_cache_size(), 1u);
    }
    EXPECT_EQ(autocast_cache_size(), 1u);
  }
  EXPECT_EQ(autocast_cache_size(), 0u);
}

TEST(Autocast, AParameterWrittenInPlaceIsCastAgain) {
  Tensor x = ones({1, 2});
  Tensor w = leaf({2, 2});
  {
    NoGradGuard no_grad;
    fill_(w, 1.0);
  }
  AutocastGuard autocast(kCpu, DType::bfloat16);
  Tensor before = matmul(x, w);
  {
    NoGradGuard no_grad;
    add_(w, ones({2, 2}));
  }
  Tensor after = matmul(x, w);
  EXPECT_EQ(before.to_vector<float>(), (std::vector<float>{2, 2}));
  EXPECT_EQ(after.to_vector<float>(), (std::vector<float>{4, 4}));
}

TEST(Autocast, GradientAccumulationInsideOneRegion) {
  Tensor x = ones({2, 2});
  Tensor w = leaf({2, 2});
  AutocastGuard autocast(kCpu, DType::bfloat16);
  for (int i = 0; i < 2; ++i) sum(matmul(x, w)).backward();
  // each pass adds 2 (the rows of x) per weight entry
  EXPECT_EQ(w.grad().to_vector<float>(), (std::vector<float>{4, 4, 4, 4}));
}

TEST(Autocast, CastsUnderNoGradAreKeptApartFromRecordedOnes) {
  Tensor w = leaf({2, 2});
  AutocastGuard autocast(kCpu, DType::bfloat16);
  {
    NoGradGuard no_grad;
    EXPECT_FALSE(matmul(w, w).requires_grad());
    EXPECT_FALSE(matmul(w, w).requires_grad());
    EXPECT_EQ(autocast_cache_size(), 1u);
  }
  Tensor y = matmul(w, w);
  EXPECT_TRUE(y.requires_grad());
  EXPECT_EQ(autocast_cache_size(), 2u);
}

// An evaluation opens a region per batch: its casts (made without a graph)
// outlive each region, so the weights are cast once for all batches; a
// region opened for training drops them, and so does the model going away.
TEST(Autocast, EvaluationCastsOutliveTheirRegionUntilTrainingResumes) {
  clear_autocast_cache();  // what earlier tests on this thread kept
  Tensor w = leaf({2, 2});
  for (int batch = 0; batch < 3; ++batch) {
    NoGradGuard no_grad;
    AutocastGuard autocast(kCpu, DType::bfloat16);
    (void)matmul(w, w);
    EXPECT_EQ(autocast_cache_size(), 1u);
  }
  EXPECT_EQ(autocast_cache_size(), 1u) << "the evaluation's cast is kept between batches";
  {
    NoGradGuard no_grad;
    add_(w, ones({2, 2}));  // a new version: cast again, not served stale
    AutocastGuard autocast(kCpu, DType::bfloat16);
    EXPECT_EQ(matmul(ones({1, 2}), w).to_vector<float>()[0],
              matmul(ones({1, 2}), w.to(DType::bfloat16).to(DType::float32)).to_vector<float>()[0]);
  }
  {
    AutocastGuard training(kCpu, DType::bfloat16);
    EXPECT_EQ(autocast_cache_size(), 0u) << "training resumed: the evaluation's casts are dropped";
  }
  {
    Tensor v = leaf({2, 2});
    NoGradGuard no_grad;
    AutocastGuard autocast(kCpu, DType::bfloat16);
    (void)matmul(v, v);
  }
  EXPECT_EQ(autocast_cache_size(), 1u);
  {
    NoGradGuard no_grad;
    AutocastGuard autocast(kCpu, DType::bfloat16);
    (void)matmul(w, w);
  }
  EXPECT_EQ(autocast_cache_size(), 1u) << "the parameter that is gone took its cast with it";
}

TEST(Autocast, PolicyTableNamesEachClass) {
  using detail::CastPolicy;
  EXPECT_EQ(detail::autocast_policy("linear"), CastPolicy::lower_precision);
  EXPECT_EQ(detail::autocast_policy("conv2d"), CastPolicy::lower_precision);
  EXPECT_EQ(detail::autocast_policy("softmax"), CastPolicy::float32);
  EXPECT_EQ(detail::autocast_policy("cross_entropy"), CastPolicy::float32);
  EXPECT_EQ(detail::autocast_policy("scatter_add"), CastPolicy::promote);
  EXPECT_FALSE(detail::autocast_policy("relu").has_value());
}

TEST(Autocast, RefusesADtypeThatIsNotHalf) {
  try {
    AutocastGuard autocast(kCpu, DType::float32);
    FAIL() << "expected TypeError";
  } catch (const TypeError& e) {
    EXPECT_NE(std::string(e.what()).find("[autocast] expected dtype bfloat16 or float16"), std::string::npos)
        << e.what();
  }
  EXPECT_FALSE(autocast_active());
}

TEST(Autocast, RefusesABackendWithoutHalfProducts) {
  // The test device here without its bmm and conv2d kernels.
  testing::ScopedOpRemoval lacks({OpId::bmm, OpId::conv2d});
  try {
    AutocastGuard autocast(testing::test_device_kind(), DType::bfloat16);
    FAIL() << "expected NotImplementedError";
  } catch (const NotImplementedError& e) {
    const std::string msg = e.what();
    EXPECT_NE(msg.find("bfloat16 mixed precision on testdev needs its bmm kernel in bfloat16"), std::string::npos)
        << msg;
    EXPECT_NE(msg.find("precision \"fp32\""), std::string::npos) << msg;
  }
  EXPECT_FALSE(autocast_active());
}

}  // namespace
}  // namespace hearth
