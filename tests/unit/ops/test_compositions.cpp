// The compositions of the fusions (hearth/dispatch/registry.h): each fused op
// dispatched on testdev, a backend of primitives only, runs as its
// composition on the device and must write every output the CPU's fused
// kernel writes (auxiliary ones included: statistics, log-sum-exp, the drawn
// counters, dropout masks, running statistics), to float32 or float64
// rounding, on random inputs. The gradients through the functional layer are
// held to the CPU's too, where the functional layer takes the fused op.
#include <cmath>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "hearth/core/generator.h"
#include "hearth/dispatch/dispatch.h"
#include "hearth/dispatch/schemas/attention_softmax.h"
#include "hearth/dispatch/schemas/batch_norm.h"
#include "hearth/dispatch/schemas/conv2d.h"
#include "hearth/dispatch/schemas/dropout_add_layer_norm.h"
#include "hearth/dispatch/schemas/fused_attention.h"
#include "hearth/dispatch/schemas/optim.h"
#include "hearth/ops/elementwise.h"
#include "hearth/ops/factory.h"
#include "hearth/ops/nn_functional.h"
#include "hearth/ops/reduction.h"
#include "tests/support/tensor_compare.h"
#include "tests/support/test_device.h"

namespace hearth {
namespace {

using testing::relative_error;

double tolerance(DType dt) { return dt == DType::float64 ? 1e-12 : 2e-6; }

Tensor random(const Shape& shape, DType dt) { return cast(sub(mul(rand(shape, DType::float64), 2.0), 1.0), dt); }

// One fused call, run by the CPU's fused kernel and by testdev's composition
// on copies of the same tensors.
struct FusedCall {
  OpId op;
  std::vector<Tensor> inputs;   // on the CPU; undefined for absent ones
  std::vector<Tensor> outputs;  // on the CPU, allocated; undefined for unwanted ones
};

Tensor copy_to(const Tensor& t, Device d) {
  if (!t.defined()) return t;
  Tensor c = Tensor::empty(t.shape(), t.dtype(), d);
  copy_(c, t);
  return c;
}

// Runs the call on both devices and compares every output and every input
// (the mutated ones must change alike; the rest must not change).
template <typename A>
void expect_composition_matches_the_fused_kernel(const FusedCall& call, const A& attrs, double tol,
                                                 const std::string& what) {
  const Device dev = testing::test_device();
  OpHandle op = find_op(call.op);
  ASSERT_EQ(op->kernels[dev.kind.id].fn, nullptr) << "testdev has no kernel for a fusion";
  std::vector<Tensor> cpu_in, dev_in, cpu_out, dev_out;
  for (const Tensor& t : call.inputs) {
    cpu_in.push_back(t.defined() ? t.clone() : t);
    dev_in.push_back(copy_to(t, dev));
  }
  for (const Tensor& t : call.outputs) {
    cpu_out.push_back(t.defined() ? Tensor::empty(t.shape(), t.dtype()) : t);
    dev_out.push_back(t.defined() ? Tensor::empty(t.shape(), t.dtype(), dev) : t);
  }
  reset_fallback_stats();
  reset_composed_calls();
  OpCall c;
  c.inputs = cpu_in;
  c.outputs = cpu_out;
  c.set_attrs(attrs);
  dispatch(op, c);
  OpCall d;
  d.inputs = dev_in;
  d.outputs = dev_out;
  d.set_attrs(attrs);
  dispatch(op, d);
  EXPECT_EQ(composed_calls()[op_name(call.op)], 1) << what;
  EXPECT_TRUE(fallback_stats().empty()) << what << ": " << fallback_report();
  for (size_t i = 0; i < cpu_out.size(); ++i) {
    if (!cpu_out[i].defined()) continue;
    EXPECT_EQ(dev_out[i].device(), dev);
    const Tensor a = dev_out[i].cpu(), b = cpu_out[i];
    if (is_floating(b.dtype()))
      EXPECT_LE(relative_error(a, b), tol) << what << ": output " << i;
    else
      EXPECT_EQ(a.to_vector<double>(), b.to_vector<double>()) << what << ": output " << i;
  }
  for (size_t i = 0; i < cpu_in.size(); ++i) {
    if (!cpu_in[i].defined()) continue;
    const Tensor a = dev_in[i].cpu(), b = cpu_in[i];
    if (is_floating(b.dtype()))
      EXPECT_LE(relative_error(a, b), tol) << what << ": input " << i;
    else
      EXPECT_EQ(a.to_vector<double>(), b.to_vector<double>()) << what << ": input " << i;
  }
}

class Compositions : public ::testing::TestWithParam<DType> {
 protected:
  void SetUp() override { manual_seed(17); }
  DType dt() const { return GetParam(); }
};

TEST_P(Compositions, Conv2dReluAndAddRelu) {
  Conv2dAttrs a;
  a.padding = {1, 0};
  a.stride = {2, 1};
  a.relu = true;
  const Tensor x = random({2, 3, 7, 6}, dt()), w = random({4, 3, 3, 3}, dt()), b = random({4}, dt());
  const Shape out{2, 4, 4, 4};
  expect_composition_matches_the_fused_kernel({OpId::conv2d_relu, {x, w, b}, {Tensor::empty(out, dt())}}, a,
                                              tolerance(dt()), "conv2d_relu");
  expect_composition_matches_the_fused_kernel({OpId::conv2d_relu, {x, w, Tensor()}, {Tensor::empty(out, dt())}}, a,
                                              tolerance(dt()), "conv2d_relu without bias");
  expect_composition_matches_the_fused_kernel(
      {OpId::conv2d_add_relu, {x, w, b, random(out, dt())}, {Tensor::empty(out, dt())}}, a, tolerance(dt()),
      "conv2d_add_relu");
}

TEST_P(Compositions, BatchNormReluAndAddReluWithTheirStatistics) {
  BatchNormAttrs a;
  a.relu = true;
  a.momentum = 0.25;
  const Tensor x = random({4, 3, 5}, dt());
  auto outputs = [&] {
    return std::vector<Tensor>{Tensor::empty({4, 3, 5}, dt()), Tensor::empty({3}, dt()), Tensor::empty({3}, dt()),
                               Tensor::empty({2, 3}, dt())};
  };
  const Tensor counter = full({1}, 3, DType::int64);
  for (bool training : {true, false}) {
    a.training = training;
    const std::string mode = training ? " training" : " eval";
    const Tensor rm = random({3}, dt()), rv = add(rand({3}, dt()), 0.5);
    expect_composition_matches_the_fused_kernel(
        {OpId::batch_norm_relu,
         {x, rm, rv, random({3}, dt()), random({3}, dt()), Tensor(), training ? counter : Tensor()},
         outputs()},
        a, tolerance(dt()), "batch_norm_relu" + mode);
    expect_composition_matches_the_fused_kernel(
        {OpId::batch_norm_add_relu,
         {x, rm, rv, random({3}, dt()), Tensor(), random({4, 3, 5}, dt()), training ? counter : Tensor()},
         outputs()},
        a, tolerance(dt()), "batch_norm_add_relu" + mode);
  }
}

TEST_P(Compositions, AttentionSoftmaxWithMaskAndDropoutAndItsBackward) {
  AttentionSoftmaxAttrs a;
  a.scale = 0.7;
  // Rows r = (i0, i1, i2) over sizes {1, 2, 3}: the mask's row is i2 (a [3, 9] mask).
  a.row_sizes[1] = 2;
  a.row_sizes[2] = 3;
  a.row_strides[2] = 9;
  const Tensor scores = random({6, 9}, dt()), mask = random({3, 9}, dt());
  for (double p : {0.0, 0.3}) {
    a.p = p;
    a.seed = 5;
    a.offset = 2;
    const bool drop = p > 0;
    const std::string what = drop ? "attention_softmax with dropout" : "attention_softmax";
    expect_composition_matches_the_fused_kernel(
        {OpId::attention_softmax,
         {scores, mask},
         {Tensor::empty({6, 9}, dt()), drop ? Tensor::empty({6, 9}, dt()) : Tensor(),
          drop ? Tensor::empty({54}, DType::bool_) : Tensor()}},
        a, tolerance(dt()), what);
    // The backward reads the forward's y and keep: the CPU's, for both.
    Tensor probs = Tensor::empty({6, 9}, dt()), y = drop ? Tensor::empty({6, 9}, dt()) : Tensor();
    Tensor keep = drop ? Tensor::empty({54}, DType::bool_) : Tensor();
    OpCall f;
    f.inputs = {scores, mask};
    f.outputs = {probs, y, keep};
    f.set_attrs(a);
    dispatch(find_op(OpId::attention_softmax), f);
    expect_composition_matches_the_fused_kernel({OpId::attention_softmax_backward,
                                                 {random({6, 9}, dt()), drop ? y : probs, keep},
                                                 {Tensor::empty({6, 9}, dt())}},
                                                a, tolerance(dt()), what + " backward");
  }
}

TEST_P(Compositions, FusedAttentionWritesLseAndCountersAndItsBackwardMatches) {
  FusedAttentionAttrs a;
  a.scale = 0.45;
  const Tensor q = random({2, 2, 5, 4}, dt()), k = random({2, 2, 6, 4}, dt()), v = random({2, 2, 6, 3}, dt());
  const Tensor mask = mul(random({2, 1, 5, 6}, dt()), 3.0);
  for (double p : {0.0, 0.25}) {
    a.p = p;
    a.seed = 7;
    a.offset = 3;
    const bool drop = p > 0;
    const std::string what = drop ? "fused_attention with dropout" : "fused_attention";
    for (const Tensor& m : {mask, Tensor()}) {
      expect_composition_matches_the_fused_kernel({OpId::fused_attention,
                                                   {q, k, v, m},
                                                   {Tensor::empty({2, 2, 5, 3}, dt()), Tensor::empty({2, 2, 5}, dt()),
                                                    drop ? Tensor::empty({2}, DType::int64) : Tensor()}},
                                                  a, tolerance(dt()), what + (m.defined() ? " and a mask" : ""));
    }
    // The backward of the CPU forward's outputs.
    Tensor out = Tensor::empty({2, 2, 5, 3}, dt()), lse = Tensor::empty({2, 2, 5}, dt());
    Tensor rng = drop ? Tensor::empty({2}, DType::int64) : Tensor();
    OpCall f;
    f.inputs = {q, k, v, mask};
    f.outputs = {out, lse, rng};
    f.set_attrs(a);
    dispatch(find_op(OpId::fused_attention), f);
    expect_composition_matches_the_fused_kernel(
        {OpId::fused_attention_backward,
         {random({2, 2, 5, 3}, dt()), q, k, v, out, lse, mask, rng},
         {Tensor::empty(q.shape(), dt()), Tensor::empty(k.shape(), dt()), Tensor::empty(v.shape(), dt())}},
        a, 4 * tolerance(dt()), what + " backward");
  }
}

TEST_P(Compositions, DropoutAddLayerNormAndItsBackward) {
  DropoutAddLayerNormAttrs a;
  a.eps = 1e-5;
  const Tensor x = random({6, 8}, dt()), r = random({6, 8}, dt()), w = random({8}, dt()), b = random({8}, dt());
  for (double p : {0.0, 0.2}) {
    a.p = p;
    a.seed = 11;
    a.offset = 1;
    const std::string what = p > 0 ? "dropout_add_layer_norm with dropout" : "dropout_add_layer_norm";
    expect_composition_matches_the_fused_kernel({OpId::dropout_add_layer_norm,
                                                 {x, r, w, b},
                                                 {Tensor::empty({6, 8}, dt()), Tensor::empty({6}, dt()),
                                                  Tensor::empty({6}, dt()), Tensor::empty({6, 8}, dt())}},
                                                a, tolerance(dt()), what);
    Tensor y = Tensor::empty({6, 8}, dt()), mean = Tensor::empty({6}, dt()), rstd = Tensor::empty({6}, dt());
    Tensor sum = Tensor::empty({6, 8}, dt());
    OpCall f;
    f.inputs = {x, r, w, b};
    f.outputs = {y, mean, rstd, sum};
    f.set_attrs(a);
    dispatch(find_op(OpId::dropout_add_layer_norm), f);
    expect_composition_matches_the_fused_kernel({OpId::dropout_add_layer_norm_backward,
                                                 {random({6, 8}, dt()), sum, mean, rstd, w},
                                                 {Tensor::empty({6, 8}, dt()), Tensor::empty({6, 8}, dt()),
                                                  Tensor::empty({8}, dt()), Tensor::empty({8}, dt())}},
                                                a, 4 * tolerance(dt()), what + " backward");
  }
}

TEST_P(Compositions, ForeachOptimizerStepsUpdateEveryGroup) {
  SgdStepAttrs s;
  s.lr = 0.1;
  s.momentum = 0.9;
  s.weight_decay = 0.01;
  s.nesterov = true;
  std::vector<Tensor> sgd;
  for (const Shape& shape : {Shape{5}, Shape{3, 4}, Shape{7}})
    sgd.insert(sgd.end(), {random(shape, dt()), random(shape, dt()), random(shape, dt())});
  expect_composition_matches_the_fused_kernel({OpId::sgd_step_foreach, sgd, {}}, s, tolerance(dt()),
                                              "sgd_step_foreach");

  AdamStepAttrs a;
  a.lr = 0.01;
  a.step = 3;
  a.weight_decay = 0.1;
  a.decoupled_weight_decay = true;
  for (bool amsgrad : {false, true}) {
    a.amsgrad = amsgrad;
    std::vector<Tensor> adam;
    for (const Shape& shape : {Shape{6}, Shape{2, 3}}) {
      adam.insert(adam.end(), {random(shape, dt()), random(shape, dt()), random(shape, dt()),
                               add(rand(shape, dt()), 0.1), amsgrad ? add(rand(shape, dt()), 0.1) : Tensor()});
    }
    expect_composition_matches_the_fused_kernel({OpId::adam_step_foreach, adam, {}}, a, tolerance(dt()),
                                                amsgrad ? "adam_step_foreach amsgrad" : "adam_step_foreach");
  }
}

TEST_P(Compositions, ClipGradNormForeachScalesEveryGradientAndReturnsTheNorm) {
  for (double norm_type : {2.0, 1.0, static_cast<double>(INFINITY)}) {
    for (double max_norm : {0.5, 100.0}) {  // clipping, and a coefficient of one
      ClipGradNormAttrs a{max_norm, norm_type};
      expect_composition_matches_the_fused_kernel({OpId::clip_grad_norm_foreach,
                                                   {random({5}, dt()), random({3, 4}, dt()), random({2}, dt())},
                                                   {Tensor::empty({}, dt())}},
                                                  a, tolerance(dt()),
                                                  "clip_grad_norm_foreach p=" + std::to_string(norm_type));
    }
  }
}

// Through the functional layer: conv2d_relu and the batch norms take the fused
// op on every device, so on testdev they run composed; their gradients (the
// backward's relu_backward and plain kernels, as the forward was composed)
// must be the CPU's (the fused backward kernels').
TEST_P(Compositions, GradientsThroughComposedConvolutionAndBatchNormMatchTheCpu) {
  const Device dev = testing::test_device();
  const Tensor x0 = random({2, 3, 6, 6}, dt()), w0 = random({4, 3, 3, 3}, dt()), b0 = random({4}, dt());
  const Tensor r0 = random({2, 4, 4, 4}, dt()), w20 = random({5, 4, 3, 3}, dt()), b20 = random({5}, dt());
  const Tensor g0 = random({2, 5, 2, 2}, dt());
  reset_fallback_stats();
  reset_composed_calls();
  auto run = [&](Device d) {
    Tensor x = copy_to(x0, d).requires_grad_(), w = copy_to(w0, d).requires_grad_();
    Tensor b = copy_to(b0, d).requires_grad_(), r = copy_to(r0, d).requires_grad_();
    Tensor w2 = copy_to(w20, d).requires_grad_(), b2 = copy_to(b20, d).requires_grad_();
    Tensor rm = copy_to(zeros({4}, dt()), d), rv = copy_to(ones({4}, dt()), d);
    Tensor h = conv2d_add_relu(x, w, b, r);
    Tensor y = batch_norm_relu(h, rm, rv, Tensor(), Tensor(), true, 0.1, 1e-5);
    Tensor y2 = batch_norm_add_relu(y, r, Tensor(), Tensor(), Tensor(), Tensor(), true);
    Tensor z = conv2d_relu(y2, w2, b2);
    z.backward(copy_to(g0, d));
    return std::vector<Tensor>{z.cpu(),         x.grad().cpu(),  w.grad().cpu(), b.grad().cpu(), r.grad().cpu(),
                               w2.grad().cpu(), b2.grad().cpu(), rm.cpu(),       rv.cpu()};
  };
  const std::vector<Tensor> on_cpu = run(Device()), on_dev = run(dev);
  for (size_t i = 0; i < on_cpu.size(); ++i)
    EXPECT_LE(relative_error(on_dev[i], on_cpu[i]), 4 * tolerance(dt())) << "result " << i;
  EXPECT_TRUE(fallback_stats().empty()) << fallback_report();
  auto composed = composed_calls();
  EXPECT_EQ(composed["conv2d_add_relu"], 1);
  EXPECT_EQ(composed["conv2d_relu"], 1);
  EXPECT_EQ(composed["batch_norm_relu"], 1);
  EXPECT_EQ(composed["batch_norm_add_relu"], 1);
}

INSTANTIATE_TEST_SUITE_P(Dtypes, Compositions, ::testing::Values(DType::float32, DType::float64),
                         [](const auto& info) { return std::string(dtype_name(info.param)); });

}  // namespace
}  // namespace hearth
