// dropout_add_layer_norm on CUDA beyond parity with the CPU
// (parity_dropout_add_layer_norm.cpp): which calls take the kernel, agreement
// with dropout, add and layer_norm on CUDA (the same elements dropped, forward
// and backward), and BERT trained either way.
#include <cmath>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "hearth/autograd/engine.h"
#include "hearth/autograd/grad_mode.h"
#include "hearth/autograd/node.h"
#include "hearth/core/generator.h"
#include "hearth/nn/models/bert.h"
#include "hearth/ops/autocast.h"
#include "hearth/ops/elementwise.h"
#include "hearth/ops/factory.h"
#include "hearth/ops/nn_functional.h"
#include "hearth/ops/reduction.h"
#include "hearth/ops/view.h"
#include "tests/gpu/gpu_test_util.h"

namespace hearth::gpu_testing {
namespace {

std::string grad_fn_name(const Tensor& t) { return t.grad_fn() ? t.grad_fn()->name() : std::string("none"); }

// Restores the switch whatever a test set it to.
struct FusedSwitch {
  bool was = fused_layer_norm_enabled();
  explicit FusedSwitch(bool on) { set_fused_layer_norm_enabled(on); }
  ~FusedSwitch() { set_fused_layer_norm_enabled(was); }
};

TEST(DropoutAddLayerNormCuda, TakesTheKernelForBertsDtypes) {
  HEARTH_REQUIRE_CUDA();
  FusedSwitch on(true);
  auto name = [](DType x, DType r) {
    Tensor a = randn({4, 768}, x, cuda0()).requires_grad_();
    return grad_fn_name(dropout_add_layer_norm(a, randn({4, 768}, r, cuda0()), {768}, Tensor(), Tensor(), 0.1, true));
  };
  EXPECT_EQ(name(DType::bfloat16, DType::float32), "DropoutAddLayerNormBackward");  // bf16-mixed BERT
  EXPECT_EQ(name(DType::bfloat16, DType::bfloat16), "DropoutAddLayerNormBackward");
  EXPECT_EQ(name(DType::float16, DType::float16), "DropoutAddLayerNormBackward");
  EXPECT_EQ(name(DType::float32, DType::float32), "DropoutAddLayerNormBackward");
  EXPECT_EQ(name(DType::float64, DType::float64), "LayerNormBackward");  // no float64 kernel: the three ops
}

struct Results {
  Tensor y, gx, gr, gw, gb;  // on the CPU
};

Results run(bool fused, DType xdt, DType rdt, const Shape& shape, double p) {
  FusedSwitch sw(fused);
  manual_seed(3);
  const int64_t K = shape.back();
  Tensor x = randn(shape, xdt, cuda0()).requires_grad_();
  Tensor r = randn(shape, rdt, cuda0()).requires_grad_();
  Tensor w = add(randn({K}, rdt, cuda0()), 1.0).detach().requires_grad_();
  Tensor b = randn({K}, rdt, cuda0()).requires_grad_();
  Tensor g = randn(shape, rdt, cuda0());
  manual_seed(19);
  Tensor y = dropout_add_layer_norm(x, r, {K}, w, b, p, true);
  EXPECT_EQ(grad_fn_name(y), fused ? "DropoutAddLayerNormBackward" : "LayerNormBackward");
  autograd::run_backward({y}, {g}, false);
  return {y.to(Device()), x.grad().to(Device()), r.grad().to(Device()), w.grad().to(Device()),
          b.grad().to(Device())};
}

// The fused kernels against dropout, add and layer_norm on the GPU, from the
// same generator state: x's gradient is zero exactly where dropout dropped
// (every other element's is not), so equal zeros mean equal masks; the rest
// agrees to the rounding of float32 statistics.
TEST(DropoutAddLayerNormCuda, AgreesWithDropoutAddAndLayerNormOnCuda) {
  HEARTH_REQUIRE_CUDA();
  struct Case {
    DType x, r;
    Shape shape;
  };
  for (const Case& c : {Case{DType::bfloat16, DType::float32, {8, 128, 768}},
                        Case{DType::bfloat16, DType::bfloat16, {8, 128, 1024}},
                        Case{DType::float16, DType::float16, {33, 769}},
                        Case{DType::float32, DType::float32, {4, 4096}}}) {
    const std::string what = std::string(dtype_name(c.x)) + "/" + dtype_name(c.r) + " " + shape_str(c.shape);
    for (double p : {0.0, 0.1}) {
      const Results fused = run(true, c.x, c.r, c.shape, p), composite = run(false, c.x, c.r, c.shape, p);
      // Half results differ by a rounding where the float32 values before it do.
      const double tol_r = c.r == DType::float32 ? 1e-5 : 1e-2, tol_x = c.x == DType::float32 ? 1e-5 : 1e-2;
      EXPECT_LT(relative_error(fused.y, composite.y), tol_r) << what << " p=" << p;
      EXPECT_LT(relative_error(fused.gr, composite.gr), 4 * tol_r) << what << " p=" << p;
      EXPECT_LT(relative_error(fused.gx, composite.gx), 4 * tol_x) << what << " p=" << p;
      EXPECT_LT(relative_error(fused.gw, composite.gw), 4 * tol_r) << what << " p=" << p;
      EXPECT_LT(relative_error(fused.gb, composite.gb), 4 * tol_r) << what << " p=" << p;
      const Tensor zf = eq(fused.gx, 0.0), zc = eq(composite.gx, 0.0);
      EXPECT_EQ(sum(cast(ne(zf, zc), DType::int64)).item<int64_t>(), 0)
          << what << " p=" << p << ": dropped elements differ";
      const double dropped = sum(cast(zf, DType::float64)).item<double>() / static_cast<double>(zf.numel());
      EXPECT_NEAR(dropped, p, 0.01) << what;
    }
  }
}

// A small BERT under bf16 autocast, hidden dropout on: the fused tail and the
// three ops draw the same masks and give the same loss and gradients, but for
// the rounding of float32 statistics.
struct BertRun {
  double loss = 0;
  std::vector<Tensor> grads;  // on the CPU, undefined where a parameter got none
  std::vector<std::string> names;
};

BertRun bert_step(bool fused) {
  using nn::models::BertConfig;
  using nn::models::BertForSequenceClassification;
  FusedSwitch sw(fused);
  manual_seed(17);
  BertConfig c;
  c.vocab_size = 500;
  c.hidden_size = 128;
  c.num_attention_heads = 2;
  c.num_hidden_layers = 2;
  c.intermediate_size = 256;
  c.max_position_embeddings = 128;
  c.hidden_dropout_prob = 0.1;
  c.attention_probs_dropout_prob = 0.1;
  c.set_num_labels(3);
  auto model = std::make_shared<BertForSequenceClassification>(c);
  model->to(cuda0());
  const Tensor ids = randint(0, 500, {4, 64}, DType::int64, cuda0());
  const Tensor labels = randint(0, 3, {4}, DType::int64, cuda0());
  manual_seed(23);  // the dropout masks
  Tensor loss;
  {
    AutocastGuard autocast(cuda0().kind, DType::bfloat16);
    loss = model->forward(ids, Tensor(), Tensor(), labels).loss;
  }
  loss.backward();
  BertRun r;
  r.loss = loss.item<double>();
  for (const auto& [name, p] : model->named_parameters()) {
    // A bias shared by every score of a row leaves its softmax unchanged: its
    // gradient is zero but for rounding, which differs between any two paths.
    if (name.find("attention.self.key.bias") != std::string::npos) continue;
    r.names.push_back(name);
    r.grads.push_back(p.grad().defined() ? p.grad().to(Device()) : Tensor());
  }
  return r;
}

TEST(DropoutAddLayerNormCuda, BertTrainsTheSameFusedOrNot) {
  HEARTH_REQUIRE_CUDA();
  const BertRun composite = bert_step(false), fused = bert_step(true);
  EXPECT_NEAR(fused.loss, composite.loss, 1e-3 * std::abs(composite.loss));
  ASSERT_EQ(fused.grads.size(), composite.grads.size());
  for (size_t i = 0; i < fused.grads.size(); ++i) {
    ASSERT_EQ(fused.grads[i].defined(), composite.grads[i].defined()) << fused.names[i];
    if (fused.grads[i].defined()) {
      EXPECT_LT(relative_error(fused.grads[i], composite.grads[i]), 2e-2) << fused.names[i];
    }
  }
}

}  // namespace
}  // namespace hearth::gpu_testing
