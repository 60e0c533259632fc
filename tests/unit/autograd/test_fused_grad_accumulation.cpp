// The engine's sum of a tensor's gradients moved into the producer of the
// next contribution (engine.h, fused_grad_accumulation_enabled): a
// convolution's backward-data or linear's input gradient adds into the
// partial sum instead of the engine adding afterwards. On the CPU the kernels
// compute the contribution and add it as the add op does, so every gradient
// must equal the plain path's bit for bit; the count of partials taken over
// says whether the fused path ran at all. Partials that someone else holds (a
// gradient also handed to another edge, one the caller gave, a leaf's .grad)
// or that are laid out otherwise must be left alone.
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "hearth/autograd/engine.h"
#include "hearth/autograd/gradcheck.h"
#include "hearth/core/generator.h"
#include "hearth/dispatch/dispatch.h"
#include "hearth/dispatch/registry.h"
#include "hearth/dispatch/schemas/conv2d.h"
#include "hearth/nn/models/bert.h"
#include "hearth/nn/models/resnet.h"
#include "hearth/ops/autocast.h"
#include "hearth/ops/elementwise.h"
#include "hearth/ops/factory.h"
#include "hearth/ops/linalg.h"
#include "hearth/ops/nn_functional.h"
#include "hearth/ops/reduction.h"
#include "hearth/ops/view.h"

namespace hearth {
namespace {

using autograd::fused_grad_accumulation_count;
using autograd::set_fused_grad_accumulation_enabled;

// Sets the switch for a scope and restores it.
class FusedAccumulation {
 public:
  explicit FusedAccumulation(bool on) : before_(autograd::fused_grad_accumulation_enabled()) {
    set_fused_grad_accumulation_enabled(on);
  }
  ~FusedAccumulation() { set_fused_grad_accumulation_enabled(before_); }

 private:
  bool before_;
};

// f maps fresh leaves (copies of `inputs` that require grad) to a scalar loss.
using LossFn = std::function<Tensor(const std::vector<Tensor>&)>;

struct Run {
  std::vector<Tensor> grads;
  uint64_t fused = 0;  // partial sums taken over
};

Run run(const LossFn& f, const std::vector<Tensor>& inputs, bool fused) {
  FusedAccumulation mode(fused);
  std::vector<Tensor> leaves;
  for (const Tensor& t : inputs) leaves.push_back(t.detach().clone().requires_grad_());
  const uint64_t before = fused_grad_accumulation_count();
  f(leaves).backward();
  Run r;
  r.fused = fused_grad_accumulation_count() - before;
  for (const Tensor& l : leaves) r.grads.push_back(l.grad());
  return r;
}

void expect_identical(const Tensor& a, const Tensor& b, const std::string& what) {
  SCOPED_TRACE(what);
  ASSERT_EQ(a.defined(), b.defined());
  if (!a.defined()) return;  // an input neither run reached
  ASSERT_EQ(a.shape(), b.shape());
  ASSERT_EQ(a.dtype(), b.dtype());
  const std::vector<double> va = a.contiguous().to_vector<double>(), vb = b.contiguous().to_vector<double>();
  for (size_t i = 0; i < va.size(); ++i) ASSERT_EQ(va[i], vb[i]) << "element " << i;
}

// Runs f with the switch off and on; the gradients must be equal bit for bit,
// and the fused run must have taken over `expected_fused` partial sums.
void expect_same_gradients(const LossFn& f, const std::vector<Tensor>& inputs, uint64_t expected_fused) {
  const Run plain = run(f, inputs, false);
  const Run fused = run(f, inputs, true);
  EXPECT_EQ(plain.fused, 0u);
  EXPECT_EQ(fused.fused, expected_fused);
  ASSERT_EQ(plain.grads.size(), fused.grads.size());
  for (size_t i = 0; i < plain.grads.size(); ++i)
    expect_identical(fused.grads[i], plain.grads[i], "input " + std::to_string(i));
}

// The loss of one output: sum(y * v) for a fixed random v, so every element's
// gradient differs.
Tensor weighted(const Tensor& y, uint64_t seed) {
  manual_seed(seed);
  return sum(mul(y, randn(y.shape(), y.dtype())));
}

Tensor image(const Shape& s, DType dt = DType::float32, bool channels_last = false) {
  Tensor t = randn(s, dt);
  return channels_last ? contiguous(t, MemoryFormat::channels_last) : t;
}

// x is made a non-leaf (as a block input is) before its two consumers: a
// convolution and a product with 3. The later-created consumer runs first in
// backward, so `conv_second` decides which of the two finds the other's
// gradient waiting.
LossFn conv_and_mul(bool conv_second) {
  return [conv_second](const std::vector<Tensor>& in) {
    Tensor x = mul(in[0], 1.5);
    Tensor a, c;
    if (conv_second) {
      c = conv2d(x, in[1], Tensor(), {1, 1}, {1, 1});
      a = mul(x, 3.0);
    } else {
      a = mul(x, 3.0);
      c = conv2d(x, in[1], Tensor(), {1, 1}, {1, 1});
    }
    return add(weighted(c, 1), weighted(a, 2));
  };
}

TEST(FusedGradAccumulation, ConvAddsIntoTheGradientThatArrivedFirst) {
  manual_seed(3);
  const std::vector<Tensor> in{image({2, 4, 7, 6}), randn({5, 4, 3, 3})};
  // The product's gradient arrives first; the convolution adds into it.
  expect_same_gradients(conv_and_mul(true), in, 1);
  // The convolution's gradient arrives first; the product's is added as before.
  expect_same_gradients(conv_and_mul(false), in, 0);
}

TEST(FusedGradAccumulation, TwoConvolutionsOfOneInput) {
  // ResNet's first block of a stage: a 3x3 convolution and the 1x1 strided
  // downsample read the same input.
  for (bool channels_last : {false, true}) {
    SCOPED_TRACE(channels_last ? "channels_last" : "NCHW");
    manual_seed(5);
    const std::vector<Tensor> in{image({2, 6, 9, 8}, DType::float32, channels_last), randn({4, 6, 3, 3}),
                                 randn({8, 6, 1, 1}), randn({4})};
    expect_same_gradients(
        [](const std::vector<Tensor>& t) {
          Tensor x = relu(t[0]);
          Tensor main = conv2d(x, t[1], t[3], {1, 1}, {1, 1});
          Tensor down = conv2d(x, t[2], Tensor(), {2, 2});
          return add(weighted(main, 1), weighted(down, 2));
        },
        in, 1);
  }
}

// A block shaped as ResNet's: out = relu(bn(conv(relu(bn(conv(x))))) + identity),
// the identity x itself or its 1x1 downsample. The identity's gradient comes
// first (from batch_norm_add_relu, or the downsample's backward-data), then the
// first convolution's. Inputs: x, w1 [mid, c, 3, 3], w2 [c, mid, 3, 3], bn1's
// weight and bias [mid], the downsample's weight [c, c, 1, 1], bn2's [c].
Tensor residual_block(const std::vector<Tensor>& t, bool downsample) {
  const int64_t c = t[0].size(1), mid = t[1].size(0);
  const DType pdt = t[3].dtype();
  Tensor x = relu(t[0]);
  Tensor h =
      batch_norm_relu(conv2d(x, t[1], Tensor(), {1, 1}, {1, 1}), zeros({mid}, pdt), ones({mid}, pdt), t[3], t[4], true);
  Tensor y = conv2d(h, t[2], Tensor(), {1, 1}, {1, 1});
  Tensor identity = downsample ? conv2d(x, t[5]) : x;
  Tensor out = batch_norm_add_relu(y, identity, zeros({c}, pdt), ones({c}, pdt), t[6], t[7], true);
  return weighted(out, 7);
}

TEST(FusedGradAccumulation, ResidualBlockBothLayoutsAndDtypes) {
  for (DType dt : {DType::float32, DType::float64, DType::bfloat16}) {
    for (bool channels_last : {false, true}) {
      for (bool downsample : {false, true}) {
        SCOPED_TRACE(std::string(dtype_name(dt)) + (channels_last ? " NHWC" : " NCHW") +
                     (downsample ? " downsample" : " identity"));
        manual_seed(11);
        const int64_t c = 6, mid = 4;
        // Batch norm's parameters in float32 beside half activations (autocast's layout).
        const DType pdt = dt == DType::float64 ? dt : DType::float32;
        const std::vector<Tensor> in{image({2, c, 6, 5}, dt, channels_last),
                                     randn({mid, c, 3, 3}, dt),
                                     randn({c, mid, 3, 3}, dt),
                                     add(randn({mid}, pdt), 1.0),
                                     randn({mid}, pdt),
                                     randn({c, c, 1, 1}, dt),
                                     add(randn({c}, pdt), 1.0),
                                     randn({c}, pdt)};
        expect_same_gradients([downsample](const std::vector<Tensor>& t) { return residual_block(t, downsample); }, in,
                              1);
      }
    }
  }
}

TEST(FusedGradAccumulation, LinearsAndAResidualAsInBert) {
  // A hidden state feeds the query, key and value projections and the
  // residual add after the attention's output projection: the add's gradient
  // arrives first, then each projection adds into the sum.
  for (DType dt : {DType::float32, DType::float64, DType::bfloat16}) {
    SCOPED_TRACE(dtype_name(dt));
    manual_seed(13);
    const int64_t b = 2, s = 5, h = 8;
    std::vector<Tensor> in{randn({b, s, h}, dt)};
    for (int i = 0; i < 4; ++i) {
      in.push_back(mul(randn({h, h}, dt), 0.3));
      in.push_back(randn({h}, dt));
    }
    in.push_back(ones({h}, dt));
    in.push_back(zeros({h}, dt));
    expect_same_gradients(
        [](const std::vector<Tensor>& t) {
          Tensor x = layer_norm(t[0], {t[0].size(-1)}, t[9], t[10]);
          Tensor q = linear(x, t[1], t[2]), k = linear(x, t[3], t[4]), v = linear(x, t[5], t[6]);
          Tensor scores = softmax(matmul(q, transpose(k, 1, 2)), -1);
          Tensor ctx = matmul(scores, v);
          Tensor out = layer_norm(add(linear(ctx, t[7], t[8]), x), {x.size(-1)});
          return weighted(out, 17);
        },
        in, 3);
  }
}

TEST(FusedGradAccumulation, AGradientAlsoHandedToAnotherInputIsNotWritten) {
  // add(x, z) hands one tensor to both x and z; the convolution of x runs
  // while z's producer still holds it, so it must add out of place.
  manual_seed(17);
  const std::vector<Tensor> in{image({2, 3, 5, 5}), randn({3, 3, 3, 3}), image({2, 3, 5, 5})};
  expect_same_gradients(
      [](const std::vector<Tensor>& t) {
        Tensor x = mul(t[0], 2.0);
        Tensor z = mul(t[2], 0.5);
        Tensor c = conv2d(x, t[1], Tensor(), {1, 1}, {1, 1});
        return add(weighted(c, 1), weighted(add(x, z), 2));
      },
      in, 0);
}

TEST(FusedGradAccumulation, AViewOfAGradientHeldElsewhereIsNotWritten) {
  // reshape's backward hands x a view of add's gradient, which z's producer
  // still holds: a tensor of its own, over memory that is not.
  manual_seed(18);
  const std::vector<Tensor> in{image({2, 3, 5, 5}), randn({3, 3, 3, 3}), randn({2, 75})};
  expect_same_gradients(
      [](const std::vector<Tensor>& t) {
        Tensor z = mul(t[2], 0.5);
        Tensor x = mul(t[0], 2.0);
        Tensor c = conv2d(x, t[1], Tensor(), {1, 1}, {1, 1});
        return add(weighted(c, 1), weighted(add(reshape(x, {2, 75}), z), 2));
      },
      in, 0);
}

TEST(FusedGradAccumulation, TheConvolutionsOwnOutputGradientIsNotWritten) {
  // y = x + conv(x): add's backward hands the same tensor to x and to the
  // convolution, whose own output gradient it then is.
  manual_seed(19);
  const std::vector<Tensor> in{image({2, 3, 6, 6}), randn({3, 3, 3, 3})};
  expect_same_gradients(
      [](const std::vector<Tensor>& t) {
        Tensor x = mul(t[0], 2.0);
        return weighted(add(x, conv2d(x, t[1], Tensor(), {1, 1}, {1, 1})), 3);
      },
      in, 0);
}

TEST(FusedGradAccumulation, AGradientTheCallerGaveIsNotWritten) {
  // x is a root with a gradient of the caller's and also feeds a convolution.
  manual_seed(23);
  Tensor x0 = image({1, 2, 5, 5}).requires_grad_();
  Tensor w = randn({2, 2, 3, 3}).requires_grad_();
  Tensor x = mul(x0, 1.0);
  Tensor loss = weighted(conv2d(x, w, Tensor(), {1, 1}, {1, 1}), 1);
  Tensor given = randn(x.shape());
  const Tensor given_before = given.clone();
  FusedAccumulation on(true);
  const uint64_t before = fused_grad_accumulation_count();
  autograd::run_backward({x, loss}, {given, ones({})}, false);
  EXPECT_EQ(fused_grad_accumulation_count() - before, 0u);
  expect_identical(given, given_before, "the caller's gradient");

  Tensor x1 = x0.detach().clone().requires_grad_(), w1 = w.detach().clone().requires_grad_();
  FusedAccumulation off(false);
  Tensor xx = mul(x1, 1.0);
  autograd::run_backward({xx, weighted(conv2d(xx, w1, Tensor(), {1, 1}, {1, 1}), 1)}, {given, ones({})}, false);
  expect_identical(x0.grad(), x1.grad(), "grad of x");
  expect_identical(w.grad(), w1.grad(), "grad of w");
}

TEST(FusedGradAccumulation, BroadcastOrOtherwiseLaidOutPartialsTakeThePlainPath) {
  manual_seed(29);
  // sum's gradient is a broadcast view (stride 0), contiguous()'s is NCHW
  // beside a channels-last convolution: neither is a layout the convolution
  // writes.
  const std::vector<Tensor> in{image({2, 3, 5, 4}, DType::float32, true), randn({4, 3, 3, 3})};
  expect_same_gradients(
      [](const std::vector<Tensor>& t) {
        Tensor x = mul(t[0], 2.0);
        Tensor c = conv2d(x, t[1], Tensor(), {1, 1}, {1, 1});
        return add(weighted(c, 1), sum(x));
      },
      in, 0);
  expect_same_gradients(
      [](const std::vector<Tensor>& t) {
        Tensor x = mul(t[0], 2.0);
        Tensor c = conv2d(x, t[1], Tensor(), {1, 1}, {1, 1});
        return add(weighted(c, 1), weighted(contiguous(x), 2));
      },
      in, 0);
}

TEST(FusedGradAccumulation, LeafGradAccumulatesAcrossBackwardsAndAHeldGradStays) {
  // A leaf read by two convolutions: the partial waits in its accumulator's
  // buffer and the second convolution adds into it; .grad itself is only
  // touched by the accumulator (in place when nobody holds it, else not).
  manual_seed(31);
  Tensor x = image({2, 3, 6, 6}).requires_grad_();
  Tensor w1 = randn({4, 3, 3, 3}), w2 = randn({2, 3, 1, 1});
  auto loss = [&] {
    return add(weighted(conv2d(x, w1, Tensor(), {1, 1}, {1, 1}), 1), weighted(conv2d(x, w2, Tensor(), {2, 2}), 2));
  };
  Tensor once;
  {
    FusedAccumulation off(false);
    loss().backward();
    once = x.grad().clone();
    x.zero_grad_(true);
  }
  FusedAccumulation on(true);
  const uint64_t before = fused_grad_accumulation_count();
  loss().backward();
  expect_identical(x.grad(), once, "first backward");
  const Tensor held = x.grad();
  loss().backward();
  EXPECT_EQ(fused_grad_accumulation_count() - before, 2u);
  expect_identical(held, once, "the .grad held across the second backward");
  expect_identical(x.grad(), add(once, once), "after two backwards");
}

TEST(FusedGradAccumulation, RetainedGraphBackwardTwice) {
  manual_seed(37);
  const std::vector<Tensor> in{image({2, 3, 5, 5}), randn({3, 3, 3, 3}), randn({3, 3, 1, 1})};
  auto twice = [&](bool fused) {
    FusedAccumulation mode(fused);
    std::vector<Tensor> l;
    for (const Tensor& t : in) l.push_back(t.detach().clone().requires_grad_());
    Tensor x = relu(l[0]);
    Tensor loss = add(weighted(conv2d(x, l[1], Tensor(), {1, 1}, {1, 1}), 1), weighted(conv2d(x, l[2]), 2));
    loss.backward(Tensor(), /*retain_graph=*/true);
    loss.backward();
    return l;
  };
  const uint64_t before = fused_grad_accumulation_count();
  const std::vector<Tensor> fused = twice(true);
  EXPECT_EQ(fused_grad_accumulation_count() - before, 2u);
  const std::vector<Tensor> plain = twice(false);
  for (size_t i = 0; i < in.size(); ++i) expect_identical(fused[i].grad(), plain[i].grad(), std::to_string(i));
}

TEST(FusedGradAccumulation, Gradcheck) {
  // float64 finite differences through the accumulating convolution and linear.
  FusedAccumulation on(true);
  manual_seed(41);
  const uint64_t before = fused_grad_accumulation_count();
  std::vector<Tensor> in{randn({2, 3, 5, 4}, DType::float64).requires_grad_(),
                         randn({2, 3, 3, 3}, DType::float64).requires_grad_(),
                         randn({4, 3, 1, 1}, DType::float64).requires_grad_()};
  GradcheckResult r = gradcheck(
      [](const std::vector<Tensor>& t) {
        Tensor x = mul(t[0], t[0]);
        return add(
            add(sum(conv2d(x, t[1], Tensor(), {1, 1}, {1, 1})), sum(mul(conv2d(x, t[2], Tensor(), {2, 1}), 0.5))),
            sum(mul(x, 0.25)));
      },
      in);
  EXPECT_TRUE(r.ok) << r.message;
  std::vector<Tensor> lin{randn({3, 4, 5}, DType::float64).requires_grad_(),
                          randn({6, 5}, DType::float64).requires_grad_(), randn({6}, DType::float64).requires_grad_(),
                          randn({2, 5}, DType::float64).requires_grad_()};
  r = gradcheck(
      [](const std::vector<Tensor>& t) {
        Tensor x = mul(t[0], t[0]);
        return add(sum(mul(linear(x, t[1], t[2]), linear(x, t[1], t[2]))), sum(linear(x, t[3])));
      },
      lin);
  EXPECT_TRUE(r.ok) << r.message;
  EXPECT_GT(fused_grad_accumulation_count() - before, 0u);
}

TEST(FusedGradAccumulation, SwitchedOffNothingIsTakenOver) {
  manual_seed(43);
  const std::vector<Tensor> in{image({2, 4, 7, 6}), randn({5, 4, 3, 3})};
  EXPECT_EQ(run(conv_and_mul(true), in, false).fused, 0u);
  EXPECT_EQ(run(conv_and_mul(true), in, true).fused, 1u);
}

// One training step's backward of a model, both ways: the same gradients bit
// for bit, and how many partial sums the fused path took over.
uint64_t expect_same_model_gradients(const std::function<std::shared_ptr<nn::Module>()>& make,
                                     const std::function<Tensor(nn::Module&)>& loss) {
  uint64_t taken = 0;
  std::vector<Tensor> plain;
  for (bool fused : {false, true}) {
    FusedAccumulation mode(fused);
    manual_seed(53);
    std::shared_ptr<nn::Module> model = make();
    const uint64_t before = fused_grad_accumulation_count();
    loss(*model).backward();
    const std::vector<Tensor> params = model->parameters();
    if (!fused) {
      for (const Tensor& p : params) plain.push_back(p.grad());
      continue;
    }
    taken = fused_grad_accumulation_count() - before;
    for (size_t i = 0; i < params.size(); ++i)
      expect_identical(params[i].grad(), plain[i], "parameter " + std::to_string(i));
  }
  return taken;
}

TEST(FusedGradAccumulation, ResNet50TakesOneSumPerBlock) {
  // ResNet-50's 16 blocks (3, 4, 6, 3), narrow: each block input's two
  // gradients (the identity's or the downsample's, then conv1's) meet in
  // conv1's backward-data. Channels-last as the GPU runs it, and under bf16
  // autocast, whose convolutions take the bf16 block inputs as they are.
  for (bool autocast : {false, true}) {
    SCOPED_TRACE(autocast ? "bf16 autocast" : "float32");
    nn::models::ResNetConfig config;
    config.block = nn::models::ResNetBlock::bottleneck;
    config.layers = {3, 4, 6, 3};
    config.base_width = 4;
    config.num_classes = 5;
    const uint64_t taken = expect_same_model_gradients(
        [&] {
          auto model = std::make_shared<nn::models::ResNet>(config);
          nn::to_channels_last(*model);
          return model;
        },
        [&](nn::Module& m) {
          Tensor x = contiguous(randn({2, 3, 32, 32}), MemoryFormat::channels_last);
          std::optional<AutocastGuard> guard;
          if (autocast) guard.emplace(kCpu, DType::bfloat16);
          return weighted(m.forward(x).to(DType::float32), 59);
        });
    EXPECT_EQ(taken, 16u);
  }
}

TEST(FusedGradAccumulation, BertTakesFourSumsPerLayerInFloat32) {
  // Each layer: the hidden state's gradients from the query, key and value
  // projections and the residual (3 sums), and the attention output's from
  // the intermediate projection and the residual (1). Under bf16 autocast the
  // float32 hidden state (layer norm's output) is cast once for the three
  // projections, whose gradients meet at that bfloat16 cast: the key's and
  // the value's (or query's) backward add into it (2 per layer); the float32
  // sums meet behind the casts' backward, which add their bf16 gradient into
  // the residual's float32 one as they widen it (2 per layer: the hidden
  // state's cast and the attention output's). With
  // shared casts off (set_autocast_shared_casts_enabled(false)) each projection casts for itself, and all
  // four casts' backward add into the float32 sum (4 per layer).
  nn::models::BertConfig c;
  c.vocab_size = 50;
  c.hidden_size = 16;
  c.num_hidden_layers = 3;
  c.num_attention_heads = 4;
  c.intermediate_size = 24;
  c.max_position_embeddings = 20;
  c.hidden_dropout_prob = 0.0;
  c.attention_probs_dropout_prob = 0.0;
  c.num_labels = 3;
  const bool shared_before = autocast_shared_casts_enabled();
  for (int mode : {0, 1, 2}) {
    const bool autocast = mode > 0, shared = mode == 1;
    SCOPED_TRACE(!autocast ? "float32" : shared ? "bf16 autocast" : "bf16 autocast, a cast per projection");
    set_autocast_shared_casts_enabled(shared);
    const uint64_t taken =
        expect_same_model_gradients([&] { return std::make_shared<nn::models::BertForSequenceClassification>(c); },
                                    [&](nn::Module& m) {
                                      Tensor ids = randint(1, 50, {3, 7});
                                      Tensor labels = tensor(std::vector<int64_t>{0, 1, 2});
                                      std::optional<AutocastGuard> guard;
                                      if (autocast) guard.emplace(kCpu, DType::bfloat16);
                                      return static_cast<nn::models::BertForSequenceClassification&>(m)
                                          .forward(ids, Tensor(), Tensor(), labels)
                                          .loss;
                                    });
    EXPECT_EQ(taken, 4u * c.num_hidden_layers);
  }
  set_autocast_shared_casts_enabled(shared_before);
}

// The kernels' contract (schemas/conv2d.h, schemas/matmul.h): the partial may
// be the output itself or another tensor; either way out = result + partial.
TEST(FusedGradAccumulation, KernelsAddIntoTheOutputOrFromADistinctPartial) {
  manual_seed(47);
  for (bool channels_last : {false, true}) {
    SCOPED_TRACE(channels_last ? "NHWC" : "NCHW");
    const MemoryFormat fmt = channels_last ? MemoryFormat::channels_last : MemoryFormat::contiguous;
    Tensor dy = contiguous(randn({2, 5, 6, 6}), fmt), w = contiguous(randn({5, 3, 3, 3}), fmt);
    Tensor partial = contiguous(randn({2, 3, 6, 6}), fmt);
    Conv2dAttrs a;
    a.padding = {1, 1};
    OpHandle op = find_op(OpId::conv2d_backward_input);
    auto run_op = [&](const std::vector<Tensor>& inputs, const Tensor& out) {
      OpCall call;
      call.inputs = inputs;
      call.outputs = {out};
      call.set_attrs(a);
      dispatch(op, call);
    };
    Tensor plain = Tensor::empty(partial.shape(), DType::float32, Device(), fmt);
    run_op({dy, w}, plain);
    const Tensor want = add(partial, plain);
    Tensor distinct = Tensor::empty(partial.shape(), DType::float32, Device(), fmt);
    run_op({dy, w, partial}, distinct);
    expect_identical(distinct, want, "conv2d_backward_input into a distinct output");
    Tensor in_place = partial.clone();
    run_op({dy, w, in_place}, in_place);
    expect_identical(in_place, want, "conv2d_backward_input in place");
  }
  Tensor a = randn({2, 3, 4}), b = transpose(randn({2, 5, 4}), 1, 2), partial = randn({2, 3, 5});
  OpHandle bmm = find_op(OpId::bmm);
  auto run_bmm = [&](const std::vector<Tensor>& inputs, const Tensor& out) {
    OpCall call;
    call.inputs = inputs;
    call.outputs = {out};
    dispatch(bmm, call);
  };
  Tensor plain = Tensor::empty({2, 3, 5});
  run_bmm({a, b}, plain);
  const Tensor want = add(partial, plain);
  Tensor distinct = Tensor::empty({2, 3, 5});
  run_bmm({a, b, Tensor(), partial}, distinct);
  expect_identical(distinct, want, "bmm into a distinct output");
  Tensor in_place = partial.clone();
  run_bmm({a, b, Tensor(), in_place}, in_place);
  expect_identical(in_place, want, "bmm in place");
}

}  // namespace
}  // namespace hearth
