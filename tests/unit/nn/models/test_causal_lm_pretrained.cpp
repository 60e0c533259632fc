// from_pretrained / save_pretrained of the causal language models: Hugging
// Face folders in both directions (names, shapes, tied weights, shards), the
// errors a user meets, and transformers' initialisation.
#include <cmath>
#include <filesystem>
#include <fstream>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "hearth/autograd/grad_mode.h"
#include "hearth/core/errors.h"
#include "hearth/core/generator.h"
#include "hearth/io/safetensors.h"
#include "hearth/nn/models/gpt2.h"
#include "hearth/nn/models/llama.h"
#include "hearth/ops/elementwise.h"
#include "hearth/ops/factory.h"
#include "hearth/ops/nn_functional.h"
#include "hearth/ops/reduction.h"
#include "hearth/ops/view.h"
#include "tests/support/temp_dir.h"
#include "tests/unit/nn/nn_testing.h"

namespace hearth {
namespace {

namespace fs = std::filesystem;
using nn::models::CausalLM;
using nn::models::GPT2Config;
using nn::models::GPT2LMHeadModel;
using nn::models::LlamaConfig;
using nn::models::LlamaForCausalLM;
using testing::contains;

template <typename F>
std::string error_of(F&& f) {
  try {
    f();
  } catch (const Error& e) {
    return e.what();
  }
  return "no error";
}

std::string fixture(const std::string& name) { return std::string(HEARTH_FIXTURES_DIR) + "/causal_lm/" + name; }

GPT2Config tiny_gpt2(bool tied = true) {
  GPT2Config c;
  c.vocab_size = 30;
  c.n_positions = 12;
  c.n_embd = 8;
  c.n_layer = 2;
  c.n_head = 2;
  c.resid_pdrop = c.embd_pdrop = c.attn_pdrop = 0.0;
  c.tie_word_embeddings = tied;
  return c;
}

LlamaConfig tiny_llama(const std::string& type = "llama", bool tied = false) {
  LlamaConfig c = LlamaConfig::defaults_for(type);
  c.vocab_size = 30;
  c.hidden_size = 8;
  c.intermediate_size = 12;
  c.num_hidden_layers = 2;
  c.num_attention_heads = 4;
  c.num_key_value_heads = 2;
  c.max_position_embeddings = 16;
  c.tie_word_embeddings = tied;
  return c;
}

double max_diff(const Tensor& a, const Tensor& b) { return abs(sub(a, b)).max().item<double>(); }

std::map<std::string, Shape> shapes_in(const std::string& file) {
  std::map<std::string, Shape> out;
  io::SafetensorsFile f(file);
  for (const auto& name : f.names()) out[name] = f.entry(name).shape;
  return out;
}

// Saves, reloads and checks the weights and the outputs are the same.
void expect_round_trip(CausalLM& model, const std::string& folder) {
  model.save_pretrained(folder);
  auto loaded = nn::models::load_causal_lm(folder);
  EXPECT_EQ(loaded->type_name(), model.type_name());
  const auto ours = model.state_dict(), theirs = loaded->state_dict();
  ASSERT_EQ(ours.size(), theirs.size());
  for (const auto& [name, t] : ours) EXPECT_EQ(max_diff(theirs.at(name), t), 0.0) << name;
  model.eval();
  loaded->eval();
  NoGradGuard no_grad;
  const Tensor ids = randint(0, model.vocab_size(), {2, 5});
  EXPECT_EQ(max_diff(loaded->forward(ids), model.forward(ids)), 0.0);
}

TEST(NnCausalLmPretrained, Gpt2SavesHuggingFaceNamesAndShapes) {
  manual_seed(3);
  GPT2LMHeadModel model(tiny_gpt2());
  testing::TempDir dir;
  expect_round_trip(model, dir.file("gpt2"));
  const auto shapes = shapes_in(dir.file("gpt2/model.safetensors"));
  EXPECT_EQ(shapes.size(), 2u + 2u + 12u * 2u) << "wte, wpe, ln_f and 12 tensors a block; no tied lm_head";
  EXPECT_FALSE(shapes.count("lm_head.weight")) << "a tied head is saved once, as transformers does";
  EXPECT_EQ(shapes.at("transformer.wte.weight"), (Shape{30, 8}));
  EXPECT_EQ(shapes.at("transformer.wpe.weight"), (Shape{12, 8}));
  // Conv1D weights are [in, out].
  EXPECT_EQ(shapes.at("transformer.h.0.attn.c_attn.weight"), (Shape{8, 24}));
  EXPECT_EQ(shapes.at("transformer.h.0.attn.c_attn.bias"), (Shape{24}));
  EXPECT_EQ(shapes.at("transformer.h.1.mlp.c_fc.weight"), (Shape{8, 32}));
  EXPECT_EQ(shapes.at("transformer.h.1.mlp.c_proj.weight"), (Shape{32, 8}));
  EXPECT_EQ(shapes.at("transformer.ln_f.bias"), (Shape{8}));
  std::ifstream config_file(dir.file("gpt2/config.json"));
  const nlohmann::json config = nlohmann::json::parse(config_file);
  EXPECT_EQ(config["architectures"][0], "GPT2LMHeadModel");
  EXPECT_EQ(config["model_type"], "gpt2");
  EXPECT_EQ(config["torch_dtype"], "float32");
}

TEST(NnCausalLmPretrained, TiedOutputLayerIsTheEmbedding) {
  manual_seed(4);
  GPT2LMHeadModel gpt2(tiny_gpt2());
  EXPECT_EQ(gpt2.lm_head, nullptr);
  EXPECT_TRUE(gpt2.output_weight().is_same(gpt2.transformer->wte->weight));
  LlamaForCausalLM qwen(tiny_llama("qwen2", /*tied=*/true));
  EXPECT_TRUE(qwen.output_weight().is_same(qwen.model->embed_tokens->weight));
  // One parameter, two uses: its gradient is the sum of both.
  auto out = qwen.forward(randint(0, 30, {1, 4}), Tensor(), randint(0, 30, {1, 4}));
  out.loss.backward();
  EXPECT_GT(abs(qwen.model->embed_tokens->weight.grad()).sum().item<double>(), 0.0);
  size_t count = 0;
  for (const auto& [name, p] : qwen.named_parameters()) count += name == "model.embed_tokens.weight";
  EXPECT_EQ(count, 1u);
  EXPECT_FALSE(qwen.state_dict().count("lm_head.weight"));
}

TEST(NnCausalLmPretrained, Gpt2UntiedHeadIsSavedAndLoaded) {
  manual_seed(5);
  GPT2LMHeadModel model(tiny_gpt2(/*tied=*/false));
  ASSERT_NE(model.lm_head, nullptr);
  EXPECT_FALSE(model.output_weight().is_same(model.transformer->wte->weight));
  testing::TempDir dir;
  expect_round_trip(model, dir.file("m"));
  EXPECT_EQ(shapes_in(dir.file("m/model.safetensors")).at("lm_head.weight"), (Shape{30, 8}));
}

TEST(NnCausalLmPretrained, LlamaAndQwen2SaveHuggingFaceNamesAndShapes) {
  manual_seed(6);
  testing::TempDir dir;
  LlamaForCausalLM llama(tiny_llama());
  expect_round_trip(llama, dir.file("llama"));
  auto shapes = shapes_in(dir.file("llama/model.safetensors"));
  EXPECT_EQ(shapes.at("model.embed_tokens.weight"), (Shape{30, 8}));
  EXPECT_EQ(shapes.at("lm_head.weight"), (Shape{30, 8}));
  EXPECT_EQ(shapes.at("model.layers.1.self_attn.q_proj.weight"), (Shape{8, 8}));
  EXPECT_EQ(shapes.at("model.layers.1.self_attn.k_proj.weight"), (Shape{4, 8})) << "2 kv heads of 2 dims";
  EXPECT_EQ(shapes.at("model.layers.1.self_attn.v_proj.weight"), (Shape{4, 8}));
  EXPECT_EQ(shapes.at("model.layers.1.self_attn.o_proj.weight"), (Shape{8, 8}));
  EXPECT_EQ(shapes.at("model.layers.0.mlp.gate_proj.weight"), (Shape{12, 8}));
  EXPECT_EQ(shapes.at("model.layers.0.mlp.down_proj.weight"), (Shape{8, 12}));
  EXPECT_EQ(shapes.at("model.layers.0.input_layernorm.weight"), (Shape{8}));
  EXPECT_EQ(shapes.at("model.norm.weight"), (Shape{8}));
  EXPECT_EQ(shapes.size(), 2u + 1u + 2u * 9u);

  LlamaForCausalLM qwen(tiny_llama("qwen2", /*tied=*/true));
  expect_round_trip(qwen, dir.file("qwen"));
  shapes = shapes_in(dir.file("qwen/model.safetensors"));
  EXPECT_FALSE(shapes.count("lm_head.weight"));
  EXPECT_EQ(shapes.at("model.layers.0.self_attn.q_proj.bias"), (Shape{8}));
  EXPECT_EQ(shapes.at("model.layers.0.self_attn.k_proj.bias"), (Shape{4}));
  EXPECT_FALSE(shapes.count("model.layers.0.self_attn.o_proj.bias"));
  std::ifstream config_file(dir.file("qwen/config.json"));
  const nlohmann::json config = nlohmann::json::parse(config_file);
  EXPECT_EQ(config["architectures"][0], "Qwen2ForCausalLM");
  EXPECT_EQ(config["model_type"], "qwen2");
  EXPECT_EQ(config["tie_word_embeddings"], true);
}

TEST(NnCausalLmPretrained, FixtureFoldersReloadUnchanged) {
  // A folder written by the reference script, saved by hearth, holds the same tensors.
  testing::TempDir dir;
  for (const char* name : {"gpt2_tiny", "llama_tiny", "qwen2_tiny"}) {
    auto model = nn::models::load_causal_lm(fixture(name));
    model->save_pretrained(dir.file(name));
    const auto original = io::load_safetensors(fixture(std::string(name) + "/model.safetensors"));
    const auto saved = io::load_safetensors(dir.file(std::string(name) + "/model.safetensors"));
    ASSERT_EQ(saved.size(), original.size()) << name;
    for (const auto& [key, t] : original) EXPECT_EQ(max_diff(saved.at(key), t), 0.0) << name << " " << key;
  }
}

TEST(NnCausalLmPretrained, ShardedCheckpointsLoad) {
  manual_seed(7);
  LlamaForCausalLM model(tiny_llama());
  testing::TempDir dir;
  const std::string folder = dir.file("sharded");
  model.save_pretrained(folder);
  // Split model.safetensors into two shards listed by an index.
  auto all = io::load_safetensors(folder + "/model.safetensors");
  std::map<std::string, Tensor> first, second;
  nlohmann::json index = {{"metadata", {{"total_size", 0}}}, {"weight_map", nlohmann::json::object()}};
  for (const auto& [key, t] : all) {
    const bool in_first = key.find("layers.1.") == std::string::npos;
    (in_first ? first : second)[key] = t;
    index["weight_map"][key] = in_first ? "model-00001-of-00002.safetensors" : "model-00002-of-00002.safetensors";
  }
  io::save_safetensors(folder + "/model-00001-of-00002.safetensors", first);
  io::save_safetensors(folder + "/model-00002-of-00002.safetensors", second);
  std::ofstream(folder + "/model.safetensors.index.json") << index.dump();
  fs::remove(folder + "/model.safetensors");
  auto loaded = LlamaForCausalLM::from_pretrained(folder);
  for (const auto& [name, t] : model.state_dict()) EXPECT_EQ(max_diff(loaded->state_dict().at(name), t), 0.0) << name;
}

TEST(NnCausalLmPretrained, Bfloat16CheckpointsLoadIntoFloat32) {
  // Checkpoints on the Hub are mostly bfloat16; the model keeps its float32.
  manual_seed(15);
  LlamaForCausalLM model(tiny_llama("qwen2", /*tied=*/true));
  testing::TempDir dir;
  const std::string folder = dir.file("bf16");
  model.save_pretrained(folder);
  std::map<std::string, Tensor> halved;
  for (const auto& [key, t] : io::load_safetensors(folder + "/model.safetensors")) halved[key] = t.to(DType::bfloat16);
  io::save_safetensors(folder + "/model.safetensors", halved);
  auto loaded = nn::models::load_causal_lm(folder);
  for (const auto& [name, t] : loaded->state_dict()) {
    EXPECT_EQ(t.dtype(), DType::float32) << name;
    EXPECT_EQ(max_diff(t, halved.at(name).to(DType::float32)), 0.0) << name;
  }
}

TEST(NnCausalLmPretrained, Gpt2ReleaseNamesAndBuffersLoad) {
  // The original "gpt2" files: a GPT2Model's names (no "transformer."), the
  // attention's mask buffers beside the weights.
  manual_seed(8);
  GPT2LMHeadModel model(tiny_gpt2());
  testing::TempDir dir;
  const std::string folder = dir.file("release");
  model.save_pretrained(folder);
  std::map<std::string, Tensor> release;
  for (const auto& [key, t] : io::load_safetensors(folder + "/model.safetensors")) release[key.substr(12)] = t;
  release["h.0.attn.bias"] = ones({1, 1, 12, 12});
  release["h.1.attn.masked_bias"] = full({}, -1e4);
  io::save_safetensors(folder + "/model.safetensors", release);
  auto loaded = GPT2LMHeadModel::from_pretrained(folder);
  for (const auto& [name, t] : model.state_dict()) EXPECT_EQ(max_diff(loaded->state_dict().at(name), t), 0.0) << name;
}

TEST(NnCausalLmPretrained, TiedCopyOfTheHeadIsIgnored) {
  manual_seed(9);
  LlamaForCausalLM model(tiny_llama("llama", /*tied=*/true));
  testing::TempDir dir;
  const std::string folder = dir.file("m");
  model.save_pretrained(folder);
  auto tensors = io::load_safetensors(folder + "/model.safetensors");
  tensors["lm_head.weight"] = tensors.at("model.embed_tokens.weight");
  io::save_safetensors(folder + "/model.safetensors", tensors);
  auto loaded = LlamaForCausalLM::from_pretrained(folder);
  EXPECT_EQ(max_diff(loaded->output_weight(), model.output_weight()), 0.0);
}

TEST(NnCausalLmPretrained, MismatchedCheckpointsAreNamed) {
  manual_seed(10);
  LlamaForCausalLM model(tiny_llama());
  testing::TempDir dir;
  const std::string folder = dir.file("m");
  model.save_pretrained(folder);
  const auto good = io::load_safetensors(folder + "/model.safetensors");
  auto rewrite = [&](const std::map<std::string, Tensor>& tensors) {
    io::save_safetensors(folder + "/model.safetensors", tensors);
  };

  auto missing = good;
  missing.erase("model.layers.1.mlp.up_proj.weight");
  rewrite(missing);
  std::string e = error_of([&] { LlamaForCausalLM::from_pretrained(folder); });
  EXPECT_TRUE(contains(e, "[llama]") && contains(e, "lacks weights of LlamaForCausalLM") &&
              contains(e, "model.layers.1.mlp.up_proj.weight") && contains(e, "model.safetensors"))
      << e;

  auto extra = good;
  extra["model.layers.0.self_attn.rotary_emb.inv_freq"] = ones({1});  // stale buffer: ignored
  extra["model.layers.0.self_attn.q_norm.weight"] = ones({2});
  rewrite(extra);
  e = error_of([&] { LlamaForCausalLM::from_pretrained(folder); });
  EXPECT_TRUE(contains(e, "holds weights LlamaForCausalLM does not have: model.layers.0.self_attn.q_norm.weight")) << e;

  auto misshapen = good;
  misshapen["model.layers.0.self_attn.k_proj.weight"] = ones({8, 8});
  rewrite(misshapen);
  e = error_of([&] { LlamaForCausalLM::from_pretrained(folder); });
  EXPECT_TRUE(contains(e, "model.layers.0.self_attn.k_proj.weight is [8, 8]") && contains(e, "[4, 8]")) << e;

  auto twice = good;
  twice["norm.weight"] = good.at("model.norm.weight");
  rewrite(twice);
  e = error_of([&] { LlamaForCausalLM::from_pretrained(folder); });
  EXPECT_TRUE(contains(e, "the same weight twice") && contains(e, "norm.weight")) << e;

  rewrite(good);
  EXPECT_NO_THROW(LlamaForCausalLM::from_pretrained(folder));

  e = error_of([&] { nn::models::load_causal_lm(dir.file("not-here/")); });
  EXPECT_TRUE(contains(e, "is not a folder") && contains(e, "never downloads")) << e;
  fs::remove(folder + "/model.safetensors");
  e = error_of([&] { nn::models::load_causal_lm(folder); });
  EXPECT_TRUE(contains(e, "model.safetensors is missing")) << e;
}

TEST(NnCausalLmPretrained, InitialisationIsTransformers) {
  manual_seed(11);
  GPT2Config c = tiny_gpt2();
  c.n_embd = 64;
  c.n_head = 4;
  c.n_inner = 256;
  c.n_layer = 8;
  c.vocab_size = 500;
  GPT2LMHeadModel gpt2(c);
  EXPECT_NEAR(testing::moments_of(gpt2.transformer->wte->weight).std, 0.02, 0.002);
  auto block = std::static_pointer_cast<nn::models::GPT2Block>((*gpt2.transformer->h)[0]);
  EXPECT_NEAR(testing::moments_of(block->attn->c_attn->weight).std, 0.02, 0.002);
  // c_proj: 0.02 / sqrt(2 * n_layer) = 0.005.
  EXPECT_NEAR(testing::moments_of(block->mlp->c_proj->weight).std, 0.005, 0.0005);
  EXPECT_NEAR(testing::moments_of(block->attn->c_proj->weight).std, 0.005, 0.001);
  EXPECT_EQ(testing::moments_of(block->attn->c_attn->bias).max, 0.0);
  EXPECT_EQ(testing::moments_of(block->ln_1->weight).min, 1.0);

  LlamaConfig lc = tiny_llama();
  lc.hidden_size = 64;
  lc.intermediate_size = 256;
  lc.vocab_size = 500;
  lc.pad_token_id = 3;
  lc.initializer_range = 0.05;
  LlamaForCausalLM llama(lc);
  EXPECT_NEAR(testing::moments_of(llama.model->embed_tokens->weight).std, 0.05, 0.003);
  EXPECT_NEAR(testing::moments_of(llama.lm_head->weight).std, 0.05, 0.003);
  EXPECT_EQ(abs(select(llama.model->embed_tokens->weight, 0, 3)).sum().item<double>(), 0.0) << "padding row";
  EXPECT_EQ(testing::moments_of(llama.model->norm->weight).min, 1.0);
}

TEST(NnCausalLmPretrained, InputsAreChecked) {
  manual_seed(12);
  GPT2LMHeadModel gpt2(tiny_gpt2());
  std::string e = error_of([&] { gpt2.forward(randint(0, 30, {1, 13})); });
  EXPECT_TRUE(contains(e, "sequence length 13 exceeds n_positions 12")) << e;
  e = error_of([&] { gpt2.forward(randn({1, 4})); });
  EXPECT_TRUE(contains(e, "expected input_ids [batch, seq_len] of int64")) << e;
  e = error_of([&] { gpt2.forward(randint(0, 30, {2, 4}), ones({2, 5}), Tensor()); });
  EXPECT_TRUE(contains(e, "expected attention_mask [2, 4]")) << e;
  e = error_of([&] { gpt2.forward(randint(0, 30, {2, 4}), Tensor(), randint(0, 30, {2})); });
  EXPECT_TRUE(contains(e, "expected labels [2, 4]")) << e;

  LlamaConfig mistral = tiny_llama("mistral");
  mistral.sliding_window = 6;
  LlamaForCausalLM model(mistral);
  e = error_of([&] { model.forward(randint(0, 30, {1, 7})); });
  EXPECT_TRUE(contains(e, "[MistralForCausalLM] sequence length 7 exceeds sliding_window")) << e;
  EXPECT_NO_THROW(model.forward(randint(0, 30, {1, 6})));
}

TEST(NnCausalLmPretrained, PaddingAndLaterTokensDoNotChangeEarlierLogits) {
  // Causality and the padding mask: logits at t depend on tokens <= t only,
  // and a right-padded row gives its real tokens' logits unchanged.
  manual_seed(13);
  for (int arch = 0; arch < 2; ++arch) {
    std::shared_ptr<CausalLM> model;
    if (arch == 0)
      model = std::make_shared<GPT2LMHeadModel>(tiny_gpt2());
    else
      model = std::make_shared<LlamaForCausalLM>(tiny_llama());
    model->eval();
    NoGradGuard no_grad;
    const Tensor ids = randint(1, 30, {1, 8});
    const Tensor full_logits = model->forward(ids);
    const Tensor prefix_logits = model->forward(narrow(ids, 1, 0, 5));
    EXPECT_LT(max_diff(narrow(full_logits, 1, 0, 5), prefix_logits), 1e-5) << model->type_name();
    Tensor mask = ones({1, 8}, DType::int64);
    fill_(narrow(mask, 1, 5, 3), 0);
    const Tensor padded = model->forward(ids, mask, Tensor()).logits;
    EXPECT_LT(max_diff(narrow(padded, 1, 0, 5), prefix_logits), 1e-5) << model->type_name();
  }
}

TEST(NnCausalLmPretrained, LossIgnoresMinus100AndShiftsTheLabels) {
  manual_seed(14);
  LlamaForCausalLM model(tiny_llama());
  model.to(DType::float64);
  model.eval();
  const int64_t batch = 2, seq = 6, vocab = 30;
  const Tensor ids = randint(0, vocab, {batch, seq});
  std::vector<int64_t> labels = ids.to_vector<int64_t>();
  labels[3] = -100;
  labels[seq + 5] = -100;
  labels[0] = -100;  // the first label is never scored anyway
  auto out = model.forward(ids, Tensor(), tensor(labels, {batch, seq}));
  // By hand: the logits at t against the label at t + 1, skipping -100.
  const std::vector<double> lp = log_softmax(out.logits, 2).to_vector<double>();
  double total = 0;
  int count = 0;
  for (int64_t b = 0; b < batch; ++b)
    for (int64_t t = 0; t + 1 < seq; ++t) {
      const int64_t label = labels[static_cast<size_t>(b * seq + t + 1)];
      if (label == -100) continue;
      total -= lp[static_cast<size_t>((b * seq + t) * vocab + label)];
      ++count;
    }
  EXPECT_EQ(count, 8);
  EXPECT_NEAR(out.loss.item<double>(), total / count, 1e-12);
}

}  // namespace
}  // namespace hearth
