// hearth's GPT-2, Llama and Qwen2 against an independent PyTorch reference
// (tests/fixtures/make_causal_lm_fixtures.py): the same Hugging Face folders
// loaded here must give the reference's logits, loss and parameter gradients,
// in float64 to ~1e-10 and in float32 to float32's precision.
#include <cmath>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "hearth/core/generator.h"
#include "hearth/io/safetensors.h"
#include "hearth/nn/models/causal_lm.h"
#include "hearth/nn/models/llama.h"
#include "hearth/nn/models/llama_rope.h"
#include "hearth/ops/attention.h"
#include "hearth/ops/autocast.h"
#include "hearth/ops/elementwise.h"
#include "hearth/ops/factory.h"
#include "hearth/ops/reduction.h"
#include "hearth/ops/view.h"

namespace hearth {
namespace {

using nn::models::CausalLM;

std::string fixture(const std::string& name) { return std::string(HEARTH_FIXTURES_DIR) + "/causal_lm/" + name; }

// max |a - b| / max |b|: one number per tensor, robust to entries near zero.
double relative_difference(const Tensor& a, const Tensor& b) {
  EXPECT_EQ(a.shape(), b.shape());
  const Tensor ad = a.to(DType::float64), bd = b.to(DType::float64);
  const double scale = abs(bd).max().item<double>();
  return abs(sub(ad, bd)).max().item<double>() / (scale > 0 ? scale : 1.0);
}

struct Case {
  std::string name;
  std::vector<std::string> gradients;
};

const std::vector<Case>& cases() {
  static const std::vector<Case> all = {
      {"gpt2_tiny",
       {"transformer.wte.weight", "transformer.h.0.attn.c_attn.bias", "transformer.h.0.attn.c_proj.bias",
        "transformer.h.1.mlp.c_fc.bias", "transformer.h.0.ln_1.weight", "transformer.ln_f.bias"}},
      {"llama_tiny",
       {"model.embed_tokens.weight", "model.layers.0.self_attn.k_proj.weight", "model.layers.0.input_layernorm.weight",
        "model.norm.weight"}},
      {"qwen2_tiny",
       {"model.embed_tokens.weight", "model.layers.0.self_attn.q_proj.bias", "model.layers.1.self_attn.v_proj.weight",
        "model.layers.1.post_attention_layernorm.weight"}},
  };
  return all;
}

// Runs a fixture in `dtype` and returns the worst relative difference from
// the reference over logits, loss and the named gradients (each also checked
// against `tolerance` with its name).
double check_against_reference(const Case& c, DType dtype, double tolerance, bool training = false,
                               bool checkpointing = false) {
  const auto expected = io::load_safetensors(fixture(c.name + ".expected.safetensors"));
  const std::string suffix = dtype == DType::float64 ? "f64" : "f32";
  std::shared_ptr<CausalLM> model = nn::models::load_causal_lm(fixture(c.name));
  model->to(dtype);
  model->train(training);
  if (checkpointing) {
    EXPECT_TRUE(model->gradient_checkpointing_enable());
  }
  auto out = model->forward(expected.at("input_ids"), expected.at("attention_mask"), expected.at("labels"));
  EXPECT_EQ(out.logits.dtype(), dtype);
  double worst = 0;
  auto compare = [&](const std::string& what, const Tensor& ours, const Tensor& theirs) {
    const double d = relative_difference(ours, theirs);
    EXPECT_LE(d, tolerance) << c.name << " " << suffix << " " << what;
    worst = std::max(worst, d);
  };
  compare("logits", out.logits, expected.at("logits_" + suffix));
  compare("loss", out.loss, expected.at("loss_" + suffix));
  out.loss.backward();
  for (const std::string& name : c.gradients)
    compare("gradient of " + name, model->get_parameter(name).grad(), expected.at("grad_" + suffix + "." + name));
  return worst;
}

TEST(NnCausalLmReference, Float64MatchesTheTorchReference) {
  for (const Case& c : cases()) {
    const double worst = check_against_reference(c, DType::float64, 1e-10);
    std::printf("[causal_lm] %s float64: max relative difference %.3e\n", c.name.c_str(), worst);
  }
}

TEST(NnCausalLmReference, Float32MatchesTheTorchReference) {
  for (const Case& c : cases()) {
    const double worst = check_against_reference(c, DType::float32, 2e-5);
    std::printf("[causal_lm] %s float32: max relative difference %.3e\n", c.name.c_str(), worst);
  }
}

TEST(NnCausalLmReference, CausalMaskMeansTheSameToTheFusedOp) {
  // Accelerators run attention as the fused op, whose mask contract
  // (hearth/dispatch/schemas/fused_attention.h) is [B or 1, 1, L, S] clamped to
  // +-65504: the causal masks, with and without padding, give the composite's
  // outputs and gradients there.
  manual_seed(1);
  Tensor padding = ones({2, 16}, DType::int64);
  fill_(narrow(select(padding, 0, 1), 0, 11, 5), 0);
  for (const Tensor& attention_mask : {Tensor(), padding}) {
    const Tensor mask = nn::models::causal_attention_mask(attention_mask, 2, 16, DType::float64, Device(), "test");
    EXPECT_EQ(mask.size(0), attention_mask.defined() ? 2 : 1);
    std::vector<Tensor> grads[2];
    Tensor outs[2];
    for (int fused = 0; fused < 2; ++fused) {
      manual_seed(2);
      Tensor q = randn({2, 4, 16, 8}, DType::float64).requires_grad_(),
             k = randn({2, 4, 16, 8}, DType::float64).requires_grad_(),
             v = randn({2, 4, 16, 8}, DType::float64).requires_grad_();
      outs[fused] = fused ? fused_attention(q, k, v, mask) : scaled_dot_product_attention(q, k, v, mask);
      sum(mul(outs[fused], outs[fused])).backward();
      grads[fused] = {q.grad(), k.grad(), v.grad()};
    }
    EXPECT_LT(relative_difference(outs[1], outs[0]), 1e-12);
    for (int i = 0; i < 3; ++i) EXPECT_LT(relative_difference(grads[1][i], grads[0][i]), 1e-12) << i;
  }
}

TEST(NnCausalLmReference, GradientCheckpointingGivesTheSameGradients) {
  // Training mode (the Llama fixtures have no dropout) with each layer recomputed in backward.
  for (const Case& c : cases())
    if (c.name != "gpt2_tiny") check_against_reference(c, DType::float64, 1e-10, /*training=*/true, true);
}

TEST(NnCausalLmReference, Bfloat16AutocastStaysCloseToTheReference) {
  // Mixed precision as training runs it: products in bfloat16, the norms,
  // softmax and loss in float32, float32 gradients for the float32 parameters.
  for (const Case& c : cases()) {
    const auto expected = io::load_safetensors(fixture(c.name + ".expected.safetensors"));
    std::shared_ptr<CausalLM> model = nn::models::load_causal_lm(fixture(c.name));
    model->eval();
    Tensor loss;
    {
      AutocastGuard autocast(kCpu, DType::bfloat16);
      loss = model->forward(expected.at("input_ids"), expected.at("attention_mask"), expected.at("labels")).loss;
    }
    EXPECT_EQ(loss.dtype(), DType::float32) << c.name;
    EXPECT_LT(relative_difference(loss, expected.at("loss_f32")), 2e-2) << c.name;
    loss.backward();
    for (const std::string& name : c.gradients) {
      const Tensor g = model->get_parameter(name).grad();
      EXPECT_EQ(g.dtype(), DType::float32) << name;
      EXPECT_LT(relative_difference(g, expected.at("grad_f32." + name)), 0.1) << c.name << " " << name;
    }
  }
}

TEST(NnCausalLmReference, RotaryFrequenciesFollowTheLlama3Rule) {
  for (const char* name : {"llama_tiny", "qwen2_tiny"}) {
    const auto expected = io::load_safetensors(fixture(std::string(name) + ".expected.safetensors"));
    auto model = nn::models::LlamaForCausalLM::from_pretrained(fixture(name));
    const std::vector<double> ours = nn::models::llama_inverse_frequencies(model->config);
    const std::vector<double> theirs = expected.at("inv_freq").to_vector<double>();
    ASSERT_EQ(ours.size(), theirs.size()) << name;
    for (size_t i = 0; i < ours.size(); ++i) EXPECT_NEAR(ours[i], theirs[i], 1e-15 * theirs[i]) << name << " " << i;
  }
  // llama_tiny's four frequencies fall in each band of the rule: kept, kept, blended, divided by factor.
  auto model = nn::models::LlamaForCausalLM::from_pretrained(fixture("llama_tiny"));
  nn::models::LlamaConfig plain = model->config;
  plain.rope_scaling.reset();
  const auto scaled = nn::models::llama_inverse_frequencies(model->config);
  const auto unscaled = nn::models::llama_inverse_frequencies(plain);
  EXPECT_EQ(scaled[0], unscaled[0]);
  EXPECT_EQ(scaled[1], unscaled[1]);
  EXPECT_LT(scaled[2], unscaled[2]);
  EXPECT_GT(scaled[2], unscaled[2] / 8);
  EXPECT_DOUBLE_EQ(scaled[3], unscaled[3] / 8);
}

}  // namespace
}  // namespace hearth
