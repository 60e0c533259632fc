// Low-rank adapters: PEFT's arithmetic, initialisation, freezing, names and
// files; loading what was saved, merging, and refusing what is not an adapter.
#include <filesystem>
#include <fstream>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "hearth/autograd/gradcheck.h"
#include "hearth/core/errors.h"
#include "hearth/core/generator.h"
#include "hearth/io/safetensors.h"
#include "hearth/nn/linear.h"
#include "hearth/nn/lora.h"
#include "hearth/ops/elementwise.h"
#include "hearth/ops/factory.h"
#include "hearth/ops/linalg.h"
#include "hearth/ops/nn_functional.h"
#include "hearth/ops/view.h"
#include "tests/support/temp_dir.h"
#include "tests/unit/nn/nn_testing.h"

namespace hearth::nn {
namespace {

namespace fs = std::filesystem;
using json = nlohmann::json;
using hearth::testing::contains;
using hearth::testing::expect_close;
using hearth::testing::TempDir;

// An attention block's projections and an output layer, named as Llama's.
class Attention : public Module {
 public:
  explicit Attention(int64_t d) : Module("Attention") {
    q_proj = register_module("q_proj", std::make_shared<Linear>(d, d));
    k_proj = register_module("k_proj", std::make_shared<Linear>(d, d));
    v_proj = register_module("v_proj", std::make_shared<Linear>(d, d, /*bias=*/false));
  }
  Tensor forward(const Tensor& x) override { return q_proj->forward(x) + k_proj->forward(x) * v_proj->forward(x); }
  std::shared_ptr<Linear> q_proj, k_proj, v_proj;
};

class Toy : public Module {
 public:
  explicit Toy(int64_t d = 6, int64_t vocab = 5) : Module("Toy") {
    manual_seed(11);
    attn = register_module("self_attn", std::make_shared<Attention>(d));
    lm_head = register_module("lm_head", std::make_shared<Linear>(d, vocab, /*bias=*/false));
  }
  Tensor forward(const Tensor& x) override { return lm_head->forward(attn->forward(x)); }
  std::shared_ptr<Attention> attn;
  std::shared_ptr<Linear> lm_head;
};

LoraConfig config(std::vector<std::string> targets = {"q_proj", "v_proj"}) {
  LoraConfig c;
  c.r = 2;
  c.alpha = 5;
  c.target_modules = std::move(targets);
  return c;
}

// B is zero after apply_lora; give it values so the adapter does something.
void randomise_adapters(Module& m) {
  for (auto& [name, t] : lora_state_dict(m))
    if (contains(name, "lora_B")) t.copy_(randn(t.shape(), t.dtype()));
}

std::string error_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const Error& e) {
    return e.what();
  }
  return "";
}

TEST(Lora, AnAdaptedModelStartsEqualToItsBaseWithOnlyTheAdaptersTrainable) {
  Toy base, adapted;
  Tensor x = randn({3, 6});
  const Tensor before = base.forward(x);
  const auto names = apply_lora(adapted, config());
  EXPECT_EQ(names, (std::vector<std::string>{"self_attn.q_proj", "self_attn.v_proj"}));
  expect_close(adapted.forward(x), before, 0.0);
  std::vector<std::string> trainable;
  for (const auto& [name, p] : adapted.named_parameters())
    if (p.requires_grad()) trainable.push_back(name);
  EXPECT_EQ(trainable, (std::vector<std::string>{"self_attn.q_proj.lora_A.weight", "self_attn.q_proj.lora_B.weight",
                                                 "self_attn.v_proj.lora_A.weight", "self_attn.v_proj.lora_B.weight"}));
  // PEFT's initialisation: A as a Linear's weight, bound 1/sqrt(in); B zero.
  const Tensor a = adapted.attn->q_proj->lora_A->weight;
  EXPECT_EQ(a.shape(), (Shape{2, 6}));
  EXPECT_LE(abs(a).max().item<double>(), 1.0 / std::sqrt(6.0));
  EXPECT_GT(abs(a).max().item<double>(), 0.0);
  EXPECT_EQ(abs(adapted.attn->q_proj->lora_B->weight).max().item<double>(), 0.0);
}

TEST(Lora, TheForwardIsTheBaseLayerPlusTheScaledLowRankProduct) {
  Toy m;
  m.to(DType::float64);
  apply_lora(m, config());
  randomise_adapters(m);
  const Linear& q = *m.attn->q_proj;
  Tensor x = randn({4, 6}, DType::float64);
  const Tensor expected =
      linear(x, q.weight, q.bias) +
      matmul(matmul(x, transpose(q.lora_A->weight, 0, 1)), transpose(q.lora_B->weight, 0, 1)) * (5.0 / 2.0);
  expect_close(m.attn->q_proj->forward(x), expected, 1e-12);
  LoraConfig rs = config();
  rs.use_rslora = true;
  EXPECT_DOUBLE_EQ(rs.scaling(), 5.0 / std::sqrt(2.0));
}

TEST(Lora, GradientsOfTheAdaptersAndTheInputPassGradcheck) {
  Linear layer(5, 4);
  layer.to(DType::float64);
  layer.add_lora(3, 1.5, 0.0);
  layer.lora_B->weight.detach().copy_(randn({4, 3}, DType::float64));
  Tensor x = randn({2, 5}, DType::float64).requires_grad_();
  auto r = gradcheck(
      [&](const std::vector<Tensor>& in) {
        layer.lora_A->weight.detach().copy_(in[1].detach());
        layer.lora_B->weight.detach().copy_(in[2].detach());
        // The inputs stand in for the adapter weights: the same arithmetic, differentiable in them.
        const Tensor base = linear(in[0], layer.weight, layer.bias);
        return base + matmul(matmul(in[0], transpose(in[1], 0, 1)), transpose(in[2], 0, 1)) * 1.5;
      },
      {x, layer.lora_A->weight.detach().clone().requires_grad_(),
       layer.lora_B->weight.detach().clone().requires_grad_()});
  EXPECT_TRUE(r.ok) << r.message;
  // And the layer's own autograd agrees with that composition.
  Tensor y = layer.forward(x);
  y.sum().backward();
  const Tensor ga = layer.lora_A->weight.grad();
  const Tensor expected_ga =
      matmul(transpose(matmul(ones({2, 4}, DType::float64), layer.lora_B->weight), 0, 1), x.detach()) * 1.5;
  expect_close(ga, expected_ga, 1e-12);
}

TEST(Lora, AllLinearAdaptsEveryLayerButTheOutput) {
  Toy m;
  const auto names = apply_lora(m, config({"all-linear"}));
  EXPECT_EQ(names, (std::vector<std::string>{"self_attn.q_proj", "self_attn.k_proj", "self_attn.v_proj"}));
  EXPECT_FALSE(m.lm_head->lora_A);
}

TEST(Lora, SavedAdaptersUsePeftsNamesAndLoadBackIntoAFreshBase) {
  TempDir dir;
  Toy m;
  LoraConfig c = config();
  c.dropout = 0.1;
  c.base_model_name_or_path = "toy-base";
  apply_lora(m, c);
  randomise_adapters(m);
  m.eval();
  Tensor x = randn({3, 6});
  const Tensor out = m.forward(x);
  save_lora_adapter(dir.file("adapter"), m, c);

  const auto tensors = io::load_safetensors(dir.file("adapter/adapter_model.safetensors"));
  std::vector<std::string> keys;
  for (const auto& [k, t] : tensors) keys.push_back(k);
  EXPECT_EQ(keys,
            (std::vector<std::string>{
                "base_model.model.self_attn.q_proj.lora_A.weight", "base_model.model.self_attn.q_proj.lora_B.weight",
                "base_model.model.self_attn.v_proj.lora_A.weight", "base_model.model.self_attn.v_proj.lora_B.weight"}));
  std::ifstream in(dir.file("adapter/adapter_config.json"));
  const json j = json::parse(in);
  EXPECT_EQ(j["peft_type"], "LORA");
  EXPECT_EQ(j["r"], 2);
  EXPECT_EQ(j["lora_alpha"], 5.0);
  EXPECT_EQ(j["lora_dropout"], 0.1);
  EXPECT_EQ(j["target_modules"], json({"q_proj", "v_proj"}));
  EXPECT_EQ(j["base_model_name_or_path"], "toy-base");
  EXPECT_EQ(j["task_type"], "CAUSAL_LM");

  Toy fresh;
  const LoraConfig read = load_lora_adapter(dir.file("adapter"), fresh);
  EXPECT_EQ(read.r, 2);
  EXPECT_DOUBLE_EQ(read.dropout, 0.1);
  fresh.eval();
  expect_close(fresh.forward(x), out, 0.0);
}

TEST(Lora, MergingFoldsTheAdapterIntoTheWeights) {
  Toy m;
  apply_lora(m, config({"all-linear"}));
  randomise_adapters(m);
  Tensor x = randn({3, 6});
  const Tensor out = m.forward(x);
  merge_lora(m);
  expect_close(m.forward(x), out, 1e-5);
  for (const auto& [name, t] : m.state_dict()) EXPECT_FALSE(contains(name, "lora")) << name;
  EXPECT_FALSE(m.attn->q_proj->lora_A);
}

TEST(Lora, AHalfPrecisionBaseKeepsFloat32Adapters) {
  Toy m;
  m.to(DType::bfloat16);
  apply_lora(m, config());
  EXPECT_EQ(m.attn->q_proj->lora_A->weight.dtype(), DType::float32);
  randomise_adapters(m);
  const Tensor y = m.forward(randn({2, 6}).to(DType::bfloat16));
  EXPECT_EQ(y.dtype(), DType::bfloat16);
}

TEST(Lora, TargetsThatMatchNothingNameTheLayersThereAre) {
  Toy m;
  const std::string e = error_of([&] { apply_lora(m, config({"c_attn"})); });
  EXPECT_TRUE(contains(e,
                       "[lora] target_modules (c_attn) match no Linear (or Conv1D) layer of this Toy; its Linear "
                       "and Conv1D layers are named k_proj, lm_head, q_proj, v_proj"))
      << e;
  apply_lora(m, config());
  EXPECT_TRUE(contains(error_of([&] { apply_lora(m, config()); }), "self_attn.q_proj already has an adapter"));
}

TEST(Lora, BadAdapterFilesAreRefusedNamingTheFieldOrTensor) {
  TempDir dir;
  Toy m;
  apply_lora(m, config());
  save_lora_adapter(dir.file("good"), m, config());
  auto with_config = [&](const std::string& name, const std::function<void(json&)>& edit) {
    const std::string d = dir.file(name);
    fs::create_directories(d);
    fs::copy_file(dir.file("good/adapter_model.safetensors"), d + "/adapter_model.safetensors");
    std::ifstream in(dir.file("good/adapter_config.json"));
    json j = json::parse(in);
    edit(j);
    std::ofstream(d + "/adapter_config.json") << j.dump();
    Toy fresh;
    return error_of([&] { load_lora_adapter(d, fresh); });
  };
  EXPECT_TRUE(contains(with_config("type", [](json& j) { j["peft_type"] = "IA3"; }),
                       "field 'peft_type': expected \"LORA\", got \"IA3\""));
  EXPECT_TRUE(contains(with_config("rank", [](json& j) { j["r"] = 1e30; }), "field 'r': expected an integer from 1"));
  EXPECT_TRUE(contains(with_config("dora", [](json& j) { j["use_dora"] = true; }), "field 'use_dora' is true"));
  EXPECT_TRUE(contains(with_config("drop", [](json& j) { j["lora_dropout"] = 1.5; }),
                       "field 'lora_dropout': expected a number in [0, 1)"));
  EXPECT_TRUE(contains(with_config("missing", [](json& j) { j.erase("target_modules"); }),
                       "field 'target_modules' is missing"));
  // The weights were saved for q and v: a config that targets k too finds k's missing.
  EXPECT_TRUE(contains(with_config("more",
                                   [](json& j) {
                                     j["target_modules"] = {"q_proj", "k_proj", "v_proj"};
                                   }),
                       "tensor 'base_model.model.self_attn.k_proj.lora_A.weight' is missing"));
  // And one that targets q alone finds v's tensors foreign.
  EXPECT_TRUE(contains(with_config("fewer", [](json& j) { j["target_modules"] = {"q_proj"}; }),
                       "tensor 'base_model.model.self_attn.v_proj.lora_A.weight' is not an adapter of a layer"));
  EXPECT_TRUE(contains(with_config("rank4", [](json& j) { j["r"] = 3; }), "has shape [2, 6], expected [3, 6]"));
  Toy fresh;
  EXPECT_TRUE(contains(error_of([&] { load_lora_adapter(dir.file("nowhere"), fresh); }), "no such file"));
}

}  // namespace
}  // namespace hearth::nn
