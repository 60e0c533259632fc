// The engine's sum of a tensor's gradients in the producer's epilogue on
// CUDA (hearth/autograd/engine.h): cuDNN's backward-data with beta = 1 and
// cuBLASLt's GEMM with C = D add the data gradient into the partial sum, where
// the switch off computes it into a tensor of its own and adds. The two paths
// round differently (the fused one rounds the sum once, in float) and may take
// different engines, so they agree within a tolerance per dtype, not bit for
// bit. float64 has no graph-API plan: its accumulating convolution always
// takes the fallback (a gradient of its own, then an add); CTest runs the
// suite again with HEARTH_CUDNN_LEGACY=1, where every dtype takes it.
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "hearth/autograd/engine.h"
#include "hearth/autograd/grad_mode.h"
#include "hearth/core/generator.h"
#include "hearth/dispatch/dispatch.h"
#include "hearth/dispatch/registry.h"
#include "hearth/dispatch/schemas/conv2d.h"
#include "hearth/nn/nn.h"
#include "hearth/ops/autocast.h"
#include "hearth/ops/elementwise.h"
#include "hearth/ops/factory.h"
#include "hearth/ops/linalg.h"
#include "hearth/ops/nn_functional.h"
#include "hearth/ops/reduction.h"
#include "hearth/ops/view.h"
#include "hearth/optim/sgd.h"
#include "hearth/train/step_graph.h"
#include "tests/gpu/gpu_test_util.h"

namespace hearth::gpu_testing {
namespace {

using autograd::fused_grad_accumulation_count;
using autograd::set_fused_grad_accumulation_enabled;

class FusedAccumulation {
 public:
  explicit FusedAccumulation(bool on) : before_(autograd::fused_grad_accumulation_enabled()) {
    set_fused_grad_accumulation_enabled(on);
  }
  ~FusedAccumulation() { set_fused_grad_accumulation_enabled(before_); }

 private:
  bool before_;
};

// The fused and plain paths differ by one rounding of the sum and by the
// engines cuDNN picks for beta = 1 and beta = 0 (TF32 for float32).
double tolerance(DType dt) {
  switch (dt) {
    case DType::float64:
      return 1e-12;
    case DType::float32:
      return 5e-3;
    case DType::float16:
      return 5e-3;
    default:
      return 2e-2;
  }
}

using LossFn = std::function<Tensor(const std::vector<Tensor>&)>;

struct Run {
  std::vector<Tensor> grads;  // on the CPU
  uint64_t fused = 0;
};

Run run(const LossFn& f, const std::vector<Tensor>& inputs, bool fused) {
  FusedAccumulation mode(fused);
  std::vector<Tensor> leaves;
  for (const Tensor& t : inputs) leaves.push_back(t.detach().clone().requires_grad_());
  const uint64_t before = fused_grad_accumulation_count();
  f(leaves).backward();
  Run r;
  r.fused = fused_grad_accumulation_count() - before;
  for (const Tensor& l : leaves) r.grads.push_back(l.grad().defined() ? l.grad().to(Device()) : Tensor());
  return r;
}

void expect_close_gradients(const LossFn& f, const std::vector<Tensor>& inputs, uint64_t expected_fused, DType dt) {
  const Run plain = run(f, inputs, false);
  const Run fused = run(f, inputs, true);
  EXPECT_EQ(plain.fused, 0u);
  EXPECT_EQ(fused.fused, expected_fused);
  ASSERT_EQ(plain.grads.size(), fused.grads.size());
  for (size_t i = 0; i < plain.grads.size(); ++i) {
    SCOPED_TRACE("input " + std::to_string(i));
    ASSERT_EQ(plain.grads[i].defined(), fused.grads[i].defined());
    if (!plain.grads[i].defined()) continue;
    EXPECT_LT(relative_error(fused.grads[i], plain.grads[i]), tolerance(dt));
  }
}

// sum(y * v) for a fixed random v on y's device, in float32.
Tensor weighted(const Tensor& y, uint64_t seed) {
  manual_seed(seed);
  const Tensor v = randn(y.shape(), DType::float32).to(y.device(), y.dtype());
  return sum(mul(y, v).to(DType::float32));
}

struct Layout {
  const char* name;
  bool channels_last;
};

class FusedGradAccumulationCuda : public ::testing::TestWithParam<DType> {
 protected:
  DType dt() const { return GetParam(); }
  // Batch norm's parameters: float32 beside half activations (autocast's layout).
  DType param_dtype() const { return dt() == DType::float64 ? dt() : DType::float32; }
  Tensor image(const Shape& s, bool channels_last) const {
    Tensor t = randn(s).to(cuda0(), dt());
    return channels_last ? contiguous(t, MemoryFormat::channels_last) : t;
  }
  Tensor weight(const Shape& s, double scale = 0.3) const { return mul(randn(s), scale).to(cuda0(), dt()); }
  Tensor param(const Shape& s, double shift) const { return add(mul(randn(s), 0.1), shift).to(cuda0(), param_dtype()); }
};

TEST_P(FusedGradAccumulationCuda, ConvolutionAndAnotherConsumerInBothOrders) {
  HEARTH_REQUIRE_CUDA();
  // NCHW only, as on the CPU: in NHWC the product's gradient comes out of
  // sum's broadcast backward in NCHW, and a partial in another layout than the
  // convolution writes is (rightly) added as before. TwoConvolutionsOfOneInput
  // and the residual blocks below cover NHWC, where every gradient is NHWC.
  for (Layout layout : {Layout{"NCHW", false}}) {
    for (bool conv_second : {true, false}) {
      SCOPED_TRACE(std::string(layout.name) + (conv_second ? ", convolution second" : ", convolution first"));
      manual_seed(3);
      const std::vector<Tensor> in{image({4, 32, 14, 14}, layout.channels_last), weight({48, 32, 3, 3})};
      expect_close_gradients(
          [conv_second](const std::vector<Tensor>& t) {
            Tensor x = mul(t[0], 1.5);
            Tensor a, c;
            if (conv_second) {
              c = conv2d(x, t[1], Tensor(), {1, 1}, {1, 1});
              a = mul(x, 3.0);
            } else {
              a = mul(x, 3.0);
              c = conv2d(x, t[1], Tensor(), {1, 1}, {1, 1});
            }
            return add(weighted(c, 1), weighted(a, 2));
          },
          in, conv_second ? 1 : 0, dt());
    }
  }
}

TEST_P(FusedGradAccumulationCuda, TwoConvolutionsOfOneInput) {
  HEARTH_REQUIRE_CUDA();
  for (Layout layout : {Layout{"NCHW", false}, Layout{"NHWC", true}}) {
    SCOPED_TRACE(layout.name);
    manual_seed(5);
    const std::vector<Tensor> in{image({4, 64, 28, 28}, layout.channels_last), weight({64, 64, 1, 1}),
                                 weight({256, 64, 1, 1})};
    expect_close_gradients(
        [](const std::vector<Tensor>& t) {
          Tensor x = relu(t[0]);
          return add(weighted(conv2d(x, t[1]), 1), weighted(conv2d(x, t[2]), 2));
        },
        in, 1, dt());
  }
}

// ResNet's bottleneck: conv1 (1x1) reads the block input beside the identity
// (batch_norm_add_relu's residual gradient) or the strided 1x1 downsample.
TEST_P(FusedGradAccumulationCuda, BottleneckBlocks) {
  HEARTH_REQUIRE_CUDA();
  for (Layout layout : {Layout{"NCHW", false}, Layout{"NHWC", true}}) {
    for (bool downsample : {false, true}) {
      SCOPED_TRACE(std::string(layout.name) + (downsample ? ", downsample" : ", identity"));
      manual_seed(7);
      const int64_t c = 64, mid = 16;
      const std::vector<Tensor> in{image({4, c, 16, 16}, layout.channels_last),
                                   weight({mid, c, 1, 1}),
                                   weight({mid, mid, 3, 3}),
                                   weight({c, mid, 1, 1}),
                                   param({mid}, 1.0),
                                   param({mid}, 0.0),
                                   param({c}, 1.0),
                                   param({c}, 0.0),
                                   weight({c, c, 1, 1})};
      const DType pdt = param_dtype();
      expect_close_gradients(
          [downsample, pdt](const std::vector<Tensor>& t) {
            const Device d = cuda0();
            const int64_t c = t[0].size(1), mid = t[1].size(0);
            Tensor x = relu(t[0]);
            Tensor h = batch_norm_relu(conv2d(x, t[1]), zeros({mid}, pdt, d), ones({mid}, pdt, d), t[4], t[5], true);
            h = batch_norm_relu(conv2d(h, t[2], Tensor(), {1, 1}, {1, 1}), zeros({mid}, pdt, d), ones({mid}, pdt, d),
                                t[4], t[5], true);
            Tensor y = conv2d(h, t[3]);
            Tensor identity = downsample ? conv2d(x, t[8]) : x;
            return weighted(batch_norm_add_relu(y, identity, zeros({c}, pdt, d), ones({c}, pdt, d), t[6], t[7], true),
                            9);
          },
          in, 1, dt());
    }
  }
}

// BERT's hidden state: the query, key and value projections and the residual.
TEST_P(FusedGradAccumulationCuda, LinearsAndAResidual) {
  HEARTH_REQUIRE_CUDA();
  manual_seed(11);
  const int64_t b = 4, s = 32, h = 64;
  std::vector<Tensor> in{randn({b, s, h}).to(cuda0(), dt())};
  for (int i = 0; i < 4; ++i) {
    in.push_back(weight({h, h}, 0.1));
    in.push_back(weight({h}, 0.1));
  }
  expect_close_gradients(
      [](const std::vector<Tensor>& t) {
        Tensor x = mul(t[0], 1.0);
        Tensor q = linear(x, t[1], t[2]), k = linear(x, t[3], t[4]), v = linear(x, t[5], t[6]);
        Tensor ctx = matmul(softmax(matmul(q, transpose(k, 1, 2)), -1), v);
        return weighted(add(linear(ctx, t[7], t[8]), x), 13);
      },
      in, 3, dt());
}

// The kernels' contract: out = result + partial, the partial being the output
// itself (the engine's case) or a distinct tensor (the CPU fallback's copy).
TEST_P(FusedGradAccumulationCuda, KernelsAddIntoTheOutputOrFromADistinctPartial) {
  HEARTH_REQUIRE_CUDA();
  manual_seed(13);
  for (Layout layout : {Layout{"NCHW", false}, Layout{"NHWC", true}}) {
    SCOPED_TRACE(layout.name);
    const MemoryFormat fmt = layout.channels_last ? MemoryFormat::channels_last : MemoryFormat::contiguous;
    const Tensor dy = image({4, 32, 14, 14}, layout.channels_last), w = contiguous(weight({32, 16, 3, 3}), fmt);
    const Tensor partial = image({4, 16, 14, 14}, layout.channels_last);
    Conv2dAttrs a;
    a.padding = {1, 1};
    auto run_op = [&](const std::vector<Tensor>& inputs, const Tensor& out) {
      OpCall call;
      call.inputs = inputs;
      call.outputs = {out};
      call.set_attrs(a);
      dispatch(find_op(OpId::conv2d_backward_input), call);
    };
    Tensor plain = Tensor::empty(partial.shape(), dt(), cuda0(), fmt);
    run_op({dy, w}, plain);
    const Tensor want = add(partial, plain);
    Tensor distinct = Tensor::empty(partial.shape(), dt(), cuda0(), fmt);
    run_op({dy, w, partial}, distinct);
    EXPECT_LT(relative_error(distinct, want), tolerance(dt())) << "conv2d_backward_input into a distinct output";
    Tensor in_place = partial.clone();
    run_op({dy, w, in_place}, in_place);
    EXPECT_LT(relative_error(in_place, want), tolerance(dt())) << "conv2d_backward_input in place";
  }
  const Tensor a = weight({2, 48, 64}, 1.0), b = transpose(weight({2, 80, 64}, 1.0), 1, 2);
  const Tensor partial = weight({2, 48, 80}, 1.0);
  auto run_bmm = [&](const std::vector<Tensor>& inputs, const Tensor& out) {
    OpCall call;
    call.inputs = inputs;
    call.outputs = {out};
    dispatch(find_op(OpId::bmm), call);
  };
  Tensor plain = Tensor::empty({2, 48, 80}, dt(), cuda0());
  run_bmm({a, b}, plain);
  const Tensor want = add(partial, plain);
  Tensor distinct = Tensor::empty({2, 48, 80}, dt(), cuda0());
  run_bmm({a, b, Tensor(), partial}, distinct);
  EXPECT_LT(relative_error(distinct, want), tolerance(dt())) << "bmm into a distinct output";
  Tensor in_place = partial.clone();
  run_bmm({a, b, Tensor(), in_place}, in_place);
  EXPECT_LT(relative_error(in_place, want), tolerance(dt())) << "bmm in place";
}

INSTANTIATE_TEST_SUITE_P(Dtypes, FusedGradAccumulationCuda,
                         ::testing::Values(DType::float32, DType::bfloat16, DType::float16, DType::float64),
                         [](const auto& info) { return std::string(dtype_name(info.param)); });

// A recorded step takes the decisions its eager steps took (the engine's
// conditions are the same at every run of the same step), so replayed steps
// of a residual network give the eager steps' losses and weights.
struct StepRun {
  std::vector<float> losses;
  std::vector<Tensor> weights;
  bool replayed = false;
  uint64_t fused = 0;
};

StepRun train_residual_net(bool graphs, int steps) {
  manual_seed(17);
  const Device d = cuda0();
  auto conv1 = std::make_shared<nn::Conv2d>(16, 16, 3, 1, 1, 1, 1, /*bias=*/false);
  auto conv2 = std::make_shared<nn::Conv2d>(16, 16, 3, 1, 1, 1, 1, /*bias=*/false);
  auto bn = std::make_shared<nn::BatchNorm2d>(16);
  auto head = std::make_shared<nn::Linear>(16 * 8 * 8, 5);
  auto model = std::make_shared<nn::Sequential>(conv1, conv2, bn, head);
  model->to(d);
  nn::to_channels_last(*model);
  optim::SGD opt(model->parameters(), optim::SGDOptions{.lr = 0.05});
  const Tensor x = contiguous(randn({16, 16, 8, 8}, DType::float32, d), MemoryFormat::channels_last);
  const Tensor y = randint(0, 5, {16}, DType::int64, d);
  const Tensor loss_out = zeros({}, DType::float32, d);
  StepRun r;
  const uint64_t before = fused_grad_accumulation_count();
  auto forward_backward = [&] {
    opt.zero_grad(/*set_to_none=*/false);
    Tensor loss;
    {
      AutocastGuard autocast(d.kind, DType::bfloat16);
      // Two residual blocks: each block input feeds conv1 and the identity.
      // The input in bf16, so that the blocks' sums stay bf16 and the second
      // block's convolution reads its input without a cast in between.
      Tensor h = relu(x.to(DType::bfloat16));
      for (int block = 0; block < 2; ++block) {
        Tensor t = relu(conv1->forward(h));
        h = relu(add(bn->forward(conv2->forward(t)), h));
      }
      loss = cross_entropy(head->forward(flatten(h, 1)), y);
    }
    loss.backward();
    NoGradGuard no_grad;
    copy_(loss_out, loss);
  };
  train::GraphedStep graphed(d, forward_backward);
  for (int i = 0; i < steps; ++i) {
    graphs ? graphed() : forward_backward();
    opt.step();
    r.losses.push_back(loss_out.item<float>());
  }
  r.fused = fused_grad_accumulation_count() - before;
  r.replayed = graphed.replaying();
  EXPECT_EQ(graphs, r.replayed) << graphed.fallback_reason();
  for (const Tensor& p : model->parameters()) r.weights.push_back(p.to(Device()));
  return r;
}

TEST(FusedGradAccumulationStepGraph, ReplayedStepsMatchEagerSteps) {
  HEARTH_REQUIRE_CUDA();
  FusedAccumulation on(true);
  const StepRun eager = train_residual_net(false, 6);
  const StepRun graphed = train_residual_net(true, 6);
  EXPECT_GT(eager.fused, 0u) << "the fused path did not run";
  ASSERT_TRUE(graphed.replayed);
  ASSERT_EQ(graphed.losses.size(), eager.losses.size());
  for (size_t i = 0; i < eager.losses.size(); ++i)
    EXPECT_NEAR(graphed.losses[i], eager.losses[i], 1e-3 * std::abs(eager.losses[i])) << "step " << i;
  ASSERT_EQ(graphed.weights.size(), eager.weights.size());
  for (size_t i = 0; i < eager.weights.size(); ++i)
    EXPECT_LT(relative_error(graphed.weights[i], eager.weights[i]), 1e-3) << "tensor " << i;
}

}  // namespace
}  // namespace hearth::gpu_testing
