// LoRA on GPT-2's Conv1D projections as PEFT adapts them (fan_in_fan_out):
// lora_A [r, in] and lora_B [out, r] as for a Linear, the adapter's term
// added to the output, (B A)^T merged into the [in, out] weight, and the
// adapter saved and loaded in PEFT's files.
#include <filesystem>
#include <fstream>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "hearth/autograd/grad_mode.h"
#include "hearth/core/generator.h"
#include "hearth/io/safetensors.h"
#include "hearth/nn/init.h"
#include "hearth/nn/lora.h"
#include "hearth/nn/models/gpt2.h"
#include "hearth/ops/elementwise.h"
#include "hearth/ops/factory.h"
#include "hearth/ops/linalg.h"
#include "hearth/ops/view.h"
#include "tests/support/temp_dir.h"
#include "tests/support/tensor_compare.h"

namespace hearth {
namespace {

namespace fs = std::filesystem;
using nn::models::CausalLM;

std::string fixture(const std::string& name) { return std::string(HEARTH_FIXTURES_DIR) + "/causal_lm/" + name; }

std::shared_ptr<CausalLM> gpt2_float64() {
  auto model = nn::models::load_causal_lm(fixture("gpt2_tiny"));
  model->to(DType::float64);
  model->eval();
  return model;
}

// Gives every adapter B a non-zero value, so the adapted model differs from its base.
void randomize_adapters(nn::Module& model) {
  NoGradGuard no_grad;
  for (auto& [name, p] : model.named_parameters())
    if (name.find("lora_B") != std::string::npos) nn::init::normal_(p, 0.0, 0.5);
}

Tensor ids() { return tensor(std::vector<int64_t>{3, 17, 5, 40, 2, 9, 11}, {1, 7}); }

TEST(GPT2Lora, Conv1DAdapterAddsScaledBAOfTheInput) {
  nn::models::GPT2Conv1D conv(6, 9);
  conv.to(DType::float64);
  conv.add_lora(2, 1.5, 0.0);
  ASSERT_EQ(conv.lora_A->weight.shape(), (Shape{2, 6}));
  ASSERT_EQ(conv.lora_B->weight.shape(), (Shape{9, 2}));
  randomize_adapters(conv);
  NoGradGuard no_grad;
  manual_seed(3);
  const Tensor x = randn({4, 6}, DType::float64);
  const Tensor base = add(matmul(x, conv.weight), conv.bias);
  const Tensor expected = add(
      base, mul(matmul(matmul(x, transpose(conv.lora_A->weight, 0, 1)), transpose(conv.lora_B->weight, 0, 1)), 1.5));
  EXPECT_LT(testing::max_abs_diff(conv.forward(x), expected), 1e-12);
  // Merged: the weight gains (B A)^T and computes the same.
  conv.merge_lora();
  EXPECT_FALSE(conv.has_lora());
  EXPECT_LT(testing::max_abs_diff(conv.forward(x), expected), 1e-12);
}

TEST(GPT2Lora, ABfloat16Conv1DKeepsFloat32Adapters) {
  nn::models::GPT2Conv1D conv(6, 9);
  conv.to(DType::bfloat16);
  conv.add_lora(2, 1.0, 0.0);
  EXPECT_EQ(conv.lora_A->weight.dtype(), DType::float32);
  EXPECT_EQ(conv.lora_B->weight.dtype(), DType::float32);
  randomize_adapters(conv);
  NoGradGuard no_grad;
  manual_seed(4);
  const Tensor x = randn({3, 6}).to(DType::bfloat16);
  const Tensor adapted = conv.forward(x);
  EXPECT_EQ(adapted.dtype(), DType::bfloat16);
  conv.merge_lora();
  EXPECT_EQ(conv.weight.dtype(), DType::bfloat16);
  // The merged weight is rounded to bfloat16 once: close, not equal.
  EXPECT_LT(testing::max_abs_diff(conv.forward(x).to(DType::float32), adapted.to(DType::float32)), 0.1);
}

TEST(GPT2Lora, CAttnAdapterSavesLoadsAndMergesAsPeft) {
  NoGradGuard no_grad;
  auto model = gpt2_float64();
  const Tensor base_logits = model->forward(ids());
  nn::LoraConfig config;
  config.r = 4;
  config.alpha = 8;
  config.target_modules = {"c_attn"};
  const auto adapted = nn::apply_lora(*model, config);
  EXPECT_EQ(adapted, (std::vector<std::string>{"transformer.h.0.attn.c_attn", "transformer.h.1.attn.c_attn"}));
  for (auto& [name, p] : model->named_parameters())
    EXPECT_EQ(p.requires_grad(), name.find("lora_") != std::string::npos) << name;
  EXPECT_LT(testing::max_abs_diff(model->forward(ids()), base_logits), 1e-12);  // B starts at zero
  randomize_adapters(*model);
  const Tensor adapted_logits = model->forward(ids());
  ASSERT_GT(testing::max_abs_diff(adapted_logits, base_logits), 1e-3);

  testing::TempDir dir;
  nn::save_lora_adapter(dir.path(), *model, config);
  std::ifstream in(dir.file("adapter_config.json"));
  const nlohmann::json saved = nlohmann::json::parse(in);
  EXPECT_EQ(saved.at("fan_in_fan_out"), true);
  const auto tensors = io::load_safetensors(dir.file("adapter_model.safetensors"));
  EXPECT_EQ(tensors.at("base_model.model.transformer.h.0.attn.c_attn.lora_A.weight").shape(), (Shape{4, 24}));
  EXPECT_EQ(tensors.at("base_model.model.transformer.h.0.attn.c_attn.lora_B.weight").shape(), (Shape{72, 4}));

  auto reloaded = gpt2_float64();
  nn::load_lora_adapter(dir.path(), *reloaded);
  EXPECT_LT(testing::max_abs_diff(reloaded->forward(ids()), adapted_logits), 1e-12);

  nn::merge_lora(*reloaded);
  EXPECT_TRUE(nn::lora_state_dict(*reloaded).empty());
  EXPECT_LT(testing::max_abs_diff(reloaded->forward(ids()), adapted_logits), 1e-12);
}

TEST(GPT2Lora, AllLinearAdaptsEveryConv1DButNotTheOutputLayer) {
  auto model = gpt2_float64();
  nn::LoraConfig config;
  config.r = 2;
  config.target_modules = {"all-linear"};
  const auto adapted = nn::apply_lora(*model, config);
  EXPECT_EQ(adapted.size(), 8u);  // c_attn, attn.c_proj, c_fc, mlp.c_proj in each of 2 blocks
}

}  // namespace
}  // namespace hearth
