// Autocast's shared casts of activations: a float32 tensor read by several
// products is cast once per dtype while it is alive and unchanged, and under
// grad mode the one cast is one node of the graph whose gradient sums its
// consumers'. Each test compares with shared casts off (set_autocast_shared_casts_enabled(false)) (a cast
// per consumer) in the same process.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include <gtest/gtest.h>

#include "hearth/autograd/engine.h"
#include "hearth/autograd/grad_mode.h"
#include "hearth/core/device_runtime.h"
#include "hearth/core/generator.h"
#include "hearth/nn/models/bert.h"
#include "hearth/ops/autocast.h"
#include "hearth/ops/elementwise.h"
#include "hearth/ops/factory.h"
#include "hearth/ops/linalg.h"
#include "hearth/ops/nn_functional.h"
#include "hearth/ops/reduction.h"
#include "hearth/ops/view.h"

namespace hearth {
namespace {

// Sets the switch for a scope and restores it.
class SharedCasts {
 public:
  explicit SharedCasts(bool on) : before_(autocast_shared_casts_enabled()) { set_autocast_shared_casts_enabled(on); }
  ~SharedCasts() { set_autocast_shared_casts_enabled(before_); }

 private:
  bool before_;
};

std::vector<double> values(const Tensor& t) { return t.contiguous().to_vector<double>(); }

void expect_identical(const Tensor& a, const Tensor& b, const std::string& what) {
  SCOPED_TRACE(what);
  ASSERT_TRUE(a.defined() && b.defined());
  ASSERT_EQ(a.shape(), b.shape());
  ASSERT_EQ(a.dtype(), b.dtype());
  const std::vector<double> va = values(a), vb = values(b);
  for (size_t i = 0; i < va.size(); ++i) ASSERT_EQ(va[i], vb[i]) << "element " << i;
}

Tensor leaf(const Shape& shape) {
  Tensor t = randn(shape);
  t.requires_grad_();
  return t;
}

// ---- three projections of one hidden state (BERT's query, key and value) ----

struct ThreeLinears {
  std::vector<Tensor> outputs;
  Tensor source_grad;
  std::vector<Tensor> param_grads;  // w0, b0, w1, b1, w2, b2
  uint64_t casts = 0;               // casts autocast made in the forward
  uint64_t fused = 0;               // partial sums the linears' backward took over
  std::vector<Tensor> input_grads;  // each projection's input gradient in float32 (for the bound)
};

ThreeLinears three_linears(bool shared) {
  SharedCasts mode(shared);
  manual_seed(11);
  Tensor src = leaf({4, 5, 32});
  std::vector<Tensor> params;
  for (int i = 0; i < 3; ++i) {
    params.push_back(leaf({24, 32}));
    params.push_back(leaf({24}));
  }
  std::vector<Tensor> upstream;
  for (int i = 0; i < 3; ++i) upstream.push_back(randn({4, 5, 24}));
  ThreeLinears r;
  Tensor loss;
  {
    AutocastGuard autocast(kCpu, DType::bfloat16);
    // A float32 activation that requires grad, as layer norm's output does.
    Tensor hidden = layer_norm(src, {32});
    const uint64_t before = autocast_casts_made();
    for (int i = 0; i < 3; ++i) r.outputs.push_back(linear(hidden, params[2 * i], params[2 * i + 1]));
    r.casts = autocast_casts_made() - before;
    loss = sum(mul(r.outputs[0], upstream[0]));
    for (int i = 1; i < 3; ++i) loss = add(loss, sum(mul(r.outputs[i], upstream[i])));
  }
  const uint64_t before = autograd::fused_grad_accumulation_count();
  loss.backward();
  r.fused = autograd::fused_grad_accumulation_count() - before;
  r.source_grad = src.grad();
  for (const Tensor& p : params) r.param_grads.push_back(p.grad());
  // Each projection's gradient with respect to its (bf16) input, computed in
  // float32 from the same bf16 operands.
  for (int i = 0; i < 3; ++i)
    r.input_grads.push_back(matmul(upstream[i].to(DType::bfloat16).to(DType::float32),
                                   params[2 * i].detach().to(DType::bfloat16).to(DType::float32)));
  return r;
}

TEST(AutocastSharedCasts, ThreeLinearsOfOneActivationMakeOneCast) {
  const ThreeLinears off = three_linears(false);
  const ThreeLinears on = three_linears(true);
  // Parameters are cast either way (3 weights, 3 biases); the hidden state
  // once instead of three times.
  EXPECT_EQ(off.casts, 6u + 3u);
  EXPECT_EQ(on.casts, 6u + 1u);
  // The key's and value's input gradients add into the partial sum of the
  // shared cast's gradient in their GEMM's epilogue; apart, the second and
  // third cast's backward add their bf16 gradient into the float32 sum of the
  // first's, widening it as they read.
  EXPECT_EQ(on.fused, 2u);
  EXPECT_EQ(off.fused, 2u);
  // The same bf16 values reach the same kernels: the forward is identical, and
  // so are the weights' and biases' gradients (their upstream gradients and
  // saved inputs are the same).
  for (int i = 0; i < 3; ++i) expect_identical(on.outputs[i], off.outputs[i], "output " + std::to_string(i));
  for (size_t i = 0; i < on.param_grads.size(); ++i)
    expect_identical(on.param_grads[i], off.param_grads[i], "parameter " + std::to_string(i));
  // The source's gradient differs by rounding only: the projections' bf16
  // input gradients are summed in bfloat16 now (two more roundings of at most
  // 2^-8 each; the next test checks that bound element by element where the
  // sum is formed), and layer norm's backward carries the difference on.
  const std::vector<double> a = values(on.source_grad), b = values(off.source_grad);
  double scale = 0.0, worst = 0.0;
  for (size_t i = 0; i < a.size(); ++i) {
    scale = std::max(scale, std::abs(b[i]));
    worst = std::max(worst, std::abs(a[i] - b[i]));
  }
  EXPECT_GT(worst, 0.0) << "the sums are formed in bfloat16 now: some rounding differs";
  EXPECT_LT(worst, 4.0 * std::ldexp(1.0, -8) * scale);
}

// Where the three gradients meet at the cast itself (the source is a plain
// float32 non-leaf with an identity backward in front), the element-wise
// bound of two bf16 roundings holds exactly.
TEST(AutocastSharedCasts, TheSharedCastsGradientIsTheBf16SumOfItsConsumers) {
  for (bool shared : {false, true}) {
    SCOPED_TRACE(shared ? "shared" : "a cast per consumer");
    SharedCasts mode(shared);
    manual_seed(12);
    Tensor src = leaf({6, 32});
    std::vector<Tensor> w, up;
    for (int i = 0; i < 3; ++i) {
      w.push_back(leaf({16, 32}));
      up.push_back(randn({6, 16}));
    }
    {
      AutocastGuard autocast(kCpu, DType::bfloat16);
      Tensor hidden = mul(src, 1.0);  // non-leaf, requires grad: an activation
      Tensor loss = sum(mul(linear(hidden, w[0]), up[0]));
      for (int i = 1; i < 3; ++i) loss = add(loss, sum(mul(linear(hidden, w[i]), up[i])));
      loss.backward();
    }
    std::vector<std::vector<double>> g;
    for (int i = 0; i < 3; ++i)
      g.push_back(values(matmul(up[i].to(DType::bfloat16), w[i].detach().to(DType::bfloat16)).to(DType::float32)));
    const std::vector<double> got = values(src.grad());
    const double u = std::ldexp(1.0, -8);
    for (size_t e = 0; e < got.size(); ++e) {
      const double f32_sum = g[0][e] + g[1][e] + g[2][e];
      const double magnitude = std::abs(g[0][e]) + std::abs(g[1][e]) + std::abs(g[2][e]);
      // Apart: the float32 sum of the bf16 terms (float32 rounding only).
      // Shared: within two bf16 roundings of it.
      const double bound = shared ? 2.0 * u * magnitude + 1e-6 * magnitude : 1e-6 * magnitude;
      ASSERT_LE(std::abs(got[e] - f32_sum), bound) << "element " << e;
    }
  }
}

// ---- what invalidates a shared cast ----

TEST(AutocastSharedCasts, AnInPlaceWriteBetweenTwoUsesMakesANewCast) {
  SharedCasts mode(true);
  Tensor x = full({2, 3}, 1.0);
  Tensor w = leaf({4, 3});
  {
    NoGradGuard no_grad;
    fill_(w, 1.0);
  }
  AutocastGuard autocast(kCpu, DType::bfloat16);
  const uint64_t start = autocast_casts_made();
  Tensor before = linear(x, w);
  const uint64_t after_first = autocast_casts_made();
  add_(x, ones({2, 3}));  // x is 2 now: a new version
  Tensor after = linear(x, w);
  EXPECT_EQ(autocast_casts_made() - after_first, 1u) << "x again (w's cast is cached)";
  EXPECT_EQ(after_first - start, 2u);
  EXPECT_EQ(before.to(DType::float32).to_vector<float>(), std::vector<float>(8, 3.0f));
  EXPECT_EQ(after.to(DType::float32).to_vector<float>(), std::vector<float>(8, 6.0f));
  // The first product's saved input is its own cast, untouched by the write.
  sum(before).backward();
  EXPECT_EQ(w.grad().to_vector<float>(), std::vector<float>(12, 2.0f));
}

TEST(AutocastSharedCasts, ADeadSourcesEntryIsNotReused) {
  SharedCasts mode(true);
  Tensor w = leaf({1, 8});
  {
    NoGradGuard no_grad;
    fill_(w, 1.0);
  }
  AutocastGuard autocast(kCpu, DType::bfloat16);
  NoGradGuard no_grad;
  (void)linear(ones({1, 8}), w);  // w's cast, kept for the region
  std::vector<const void*> addresses;
  for (int i = 1; i <= 4; ++i) {
    // A new tensor of the same shape each time: the allocator may give it the
    // freed one's memory (and its Storage object the same address).
    Tensor x = full({1, 8}, static_cast<double>(i));
    addresses.push_back(x.data_ptr());
    const uint64_t before = autocast_casts_made();
    EXPECT_EQ(linear(x, w).to(DType::float32).item<float>(), 8.0f * static_cast<float>(i)) << "round " << i;
    EXPECT_EQ(autocast_casts_made() - before, 1u) << "round " << i;
  }
  RecordProperty("same_address_reused", addresses[0] == addresses[1] ? "yes" : "no");
}

// The cache holds nothing alive: neither the source nor a cast nobody else
// keeps (under no-grad nothing saves the cast, so it goes with its op).
TEST(AutocastSharedCasts, EntriesKeepNeitherSourceNorCastAlive) {
  SharedCasts mode(true);
  DeviceRuntime& cpu = device_runtime(kCpu);
  Tensor w = ones({4, 64});  // not a parameter: its cast is not cached either
  AutocastGuard autocast(kCpu, DType::bfloat16);
  NoGradGuard no_grad;
  Tensor x = randn({16, 64});
  std::weak_ptr<Storage> source = x.storage();
  const size_t before = cpu.memory_stats(0).active;
  Tensor y = linear(x, w);
  EXPECT_EQ(cpu.memory_stats(0).active - before, y.nbytes()) << "the casts went with the product";
  x = Tensor();
  EXPECT_TRUE(source.expired());
}

TEST(AutocastSharedCasts, NoGradAndRecordedCastsAreKeptApart) {
  SharedCasts mode(true);
  manual_seed(13);
  Tensor src = leaf({3, 8});
  Tensor w = leaf({2, 8});
  {
    NoGradGuard no_grad;
    fill_(w, 1.0);
  }
  AutocastGuard autocast(kCpu, DType::bfloat16);
  Tensor hidden = mul(src, 1.0);
  const uint64_t c0 = autocast_casts_made();
  {
    NoGradGuard no_grad;
    EXPECT_FALSE(linear(hidden, w).requires_grad());
  }
  EXPECT_EQ(autocast_casts_made() - c0, 2u) << "hidden and w without a graph";
  Tensor first = linear(hidden, w);
  EXPECT_TRUE(first.requires_grad());
  EXPECT_EQ(autocast_casts_made() - c0, 4u) << "hidden and w again, with a graph";
  Tensor second = linear(hidden, w);
  EXPECT_EQ(autocast_casts_made() - c0, 4u) << "the recorded casts shared";
  {
    NoGradGuard no_grad;
    (void)linear(hidden, w);
  }
  EXPECT_EQ(autocast_casts_made() - c0, 5u) << "no-grad: not the recorded cast of hidden (w's is cached)";
  // A detached alias (the same bytes, no graph) gets a plain cast of its own;
  // the tensor itself keeps its recorded one.
  (void)linear(hidden.detach(), w);
  EXPECT_EQ(autocast_casts_made() - c0, 6u);
  Tensor third = linear(hidden, w);
  EXPECT_EQ(autocast_casts_made() - c0, 6u);
  // Three products of w = ones: every source element's gradient is 3 * 2.
  sum(add(add(first, second), third).to(DType::float32)).backward();
  EXPECT_EQ(src.grad().to_vector<float>(), std::vector<float>(24, 6.0f));
}

TEST(AutocastSharedCasts, EachTargetDtypeHasItsCastAndNestedRegionsShareTheOuterOnes) {
  SharedCasts mode(true);
  manual_seed(14);
  Tensor src = leaf({2, 8});
  Tensor w = leaf({3, 8});
  Tensor hidden = mul(src, 1.0);
  std::vector<Tensor> outputs;
  {
    AutocastGuard outer(kCpu, DType::bfloat16);
    const uint64_t c0 = autocast_casts_made();
    outputs.push_back(linear(hidden, w));
    EXPECT_EQ(autocast_casts_made() - c0, 2u);
    {
      AutocastGuard inner(kCpu, DType::float16);
      outputs.push_back(linear(hidden, w));
      EXPECT_EQ(outputs.back().dtype(), DType::float16);
      EXPECT_EQ(autocast_casts_made() - c0, 4u) << "float16 casts of their own";
      outputs.push_back(linear(hidden, w));
      EXPECT_EQ(autocast_casts_made() - c0, 4u) << "and shared";
      {
        AutocastGuard innermost(kCpu, DType::bfloat16);
        outputs.push_back(linear(hidden, w));
        EXPECT_EQ(outputs.back().dtype(), DType::bfloat16);
        EXPECT_EQ(autocast_casts_made() - c0, 4u) << "the outer region's bf16 casts";
      }
    }
  }
  {
    AutocastGuard next(kCpu, DType::bfloat16);
    const uint64_t c1 = autocast_casts_made();
    outputs.push_back(linear(hidden, w));
    EXPECT_EQ(autocast_casts_made() - c1, 2u) << "a region's casts end with it";
  }
  Tensor loss = sum(outputs[0].to(DType::float32));
  for (size_t i = 1; i < outputs.size(); ++i) loss = add(loss, sum(outputs[i].to(DType::float32)));
  loss.backward();
  // Five products: each source element's gradient is 5 times its column's sum
  // of w, in the half types' rounding of w.
  const std::vector<float> g = src.grad().to_vector<float>();
  const std::vector<float> expect = mul(sum(w.detach(), {0}), 5.0).to_vector<float>();
  for (size_t i = 0; i < g.size(); ++i) EXPECT_NEAR(g[i], expect[i % 8], 0.05 * std::abs(expect[i % 8]) + 1e-3);
}

// ---- BERT under bf16 autocast ----

struct BertRun {
  float loss = 0;
  std::vector<Tensor> grads;
  uint64_t casts = 0;
  size_t held = 0;  // bytes live tensors hold after the forward
};

BertRun bert_step(const nn::models::BertConfig& c, bool shared) {
  SharedCasts mode(shared);
  DeviceRuntime& cpu = device_runtime(kCpu);
  manual_seed(21);
  nn::models::BertForSequenceClassification model(c);
  model.train();
  const Tensor ids = randint(0, c.vocab_size, {4, 16}, DType::int64);
  const Tensor labels = randint(0, c.num_labels, {4}, DType::int64);
  BertRun r;
  Tensor loss;
  {
    AutocastGuard autocast(kCpu, DType::bfloat16);
    const uint64_t casts = autocast_casts_made();
    const size_t before = cpu.memory_stats(0).active;
    loss = model.forward(ids, Tensor(), Tensor(), labels).loss;
    r.held = cpu.memory_stats(0).active - before;
    r.casts = autocast_casts_made() - casts;
  }
  loss.backward();
  r.loss = loss.item<float>();
  for (const Tensor& p : model.parameters()) r.grads.push_back(p.grad());
  return r;
}

TEST(AutocastSharedCasts, BertStepMatchesACastPerProjection) {
  nn::models::BertConfig c;
  c.vocab_size = 60;
  c.hidden_size = 64;
  c.num_hidden_layers = 3;
  c.num_attention_heads = 4;
  c.intermediate_size = 128;
  c.max_position_embeddings = 32;
  c.hidden_dropout_prob = 0.1;  // the same masks on both runs (same seed, same draws)
  c.attention_probs_dropout_prob = 0.1;
  c.num_labels = 3;
  const BertRun off = bert_step(c, false);
  const BertRun on = bert_step(c, true);
  // The forward computes on the same values: the loss is identical.
  EXPECT_EQ(on.loss, off.loss);
  // Per layer the hidden state is cast once instead of three times.
  EXPECT_EQ(off.casts - on.casts, 2u * c.num_hidden_layers);
  // Two bf16 copies of [4, 16, 64] fewer held for backward per layer.
  const size_t copy = 4 * 16 * 64 * 2;
  EXPECT_EQ(off.held - on.held, 2 * copy * c.num_hidden_layers);
  // Gradients: the hidden states' sums are formed in bfloat16 (see the
  // three-linears test), and that rounding flows back through the layers
  // below: equal within a few bf16 roundings (2^-8 each; 0.02 is about five)
  // of each gradient's scale. The key projection's bias gets a gradient that
  // is zero but for rounding (softmax ignores a shift shared by all keys), so
  // every difference may also be 1e-4 of the largest gradient in the model.
  ASSERT_EQ(on.grads.size(), off.grads.size());
  std::vector<double> scale;
  double model_scale = 0.0;
  for (size_t i = 0; i < off.grads.size(); ++i) {
    ASSERT_TRUE(on.grads[i].defined() && off.grads[i].defined()) << "parameter " << i;
    scale.push_back(amax(abs(off.grads[i])).item<double>());
    model_scale = std::max(model_scale, scale.back());
  }
  for (size_t i = 0; i < on.grads.size(); ++i) {
    const double diff = amax(abs(sub(on.grads[i], off.grads[i]))).item<double>();
    EXPECT_LE(diff, 0.02 * scale[i] + 1e-4 * model_scale) << "parameter " << i << " of scale " << scale[i];
  }
}

}  // namespace
}  // namespace hearth
