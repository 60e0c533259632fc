// from_pretrained / save_pretrained of the BERT models: Hugging Face model
// folders, in both directions, and the errors a user meets.
#include <filesystem>
#include <fstream>
#include <sstream>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "hearth/autograd/grad_mode.h"
#include "hearth/core/generator.h"
#include "hearth/io/safetensors.h"
#include "hearth/nn/models/bert.h"
#include "hearth/ops/elementwise.h"
#include "hearth/ops/factory.h"
#include "hearth/ops/reduction.h"
#include "tests/support/temp_dir.h"
#include "tests/unit/nn/nn_testing.h"

namespace hearth {
namespace {

namespace fs = std::filesystem;
using nn::models::BertConfig;
using nn::models::BertForSequenceClassification;
using nn::models::BertModel;

BertConfig tiny_config(int64_t num_labels = 3) {
  BertConfig c;
  c.vocab_size = 40;
  c.hidden_size = 8;
  c.num_hidden_layers = 2;
  c.num_attention_heads = 2;
  c.intermediate_size = 12;
  c.max_position_embeddings = 16;
  c.hidden_dropout_prob = 0.0;
  c.attention_probs_dropout_prob = 0.0;
  c.num_labels = num_labels;
  return c;
}

double max_diff(const Tensor& a, const Tensor& b) { return abs(sub(a, b)).max().item<double>(); }

template <typename F>
std::string error_of(F&& f) {
  try {
    f();
  } catch (const Error& e) {
    return e.what();
  }
  return "no error";
}

TEST(NnBertPretrained, SaveThenLoadGivesTheSameModel) {
  manual_seed(21);
  BertConfig c = tiny_config();
  c.id2label = {"neg", "neu", "pos"};
  BertForSequenceClassification model(c);
  testing::TempDir dir;
  const std::string folder = dir.file("model");
  fs::create_directories(folder);
  dir.write("model/vocab.txt", "[PAD]\n");
  model.save_pretrained(folder);
  EXPECT_TRUE(fs::exists(folder + "/vocab.txt")) << "save_pretrained leaves the folder's other files alone";
  EXPECT_FALSE(fs::exists(folder + "/model.safetensors.tmp"));

  std::ifstream config_file(folder + "/config.json");
  const nlohmann::json config = nlohmann::json::parse(config_file);
  EXPECT_EQ(config["architectures"][0], "BertForSequenceClassification");
  EXPECT_EQ(config["id2label"]["2"], "pos");
  io::SafetensorsFile weights(folder + "/model.safetensors");
  EXPECT_EQ(weights.metadata().at("format"), "pt");

  auto loaded = BertForSequenceClassification::from_pretrained(folder, {.log = nullptr});
  EXPECT_EQ(loaded->config.id2label, c.id2label);
  for (const auto& [name, t] : model.state_dict()) EXPECT_EQ(max_diff(loaded->state_dict().at(name), t), 0.0) << name;
  model.eval();
  loaded->eval();
  NoGradGuard no_grad;
  Tensor ids = randint(1, 40, {2, 6});
  EXPECT_EQ(max_diff(loaded->forward(ids), model.forward(ids)), 0.0);

  // Saving over an existing folder replaces the weights.
  manual_seed(22);
  BertForSequenceClassification other(c);
  other.save_pretrained(folder);
  auto reloaded = BertForSequenceClassification::from_pretrained(folder, {.log = nullptr});
  EXPECT_EQ(max_diff(reloaded->classifier->weight, other.classifier->weight), 0.0);
}

// A base checkpoint (BertModel, names without "bert.") fine-tuned with a new
// head: the encoder is loaded, the classifier initialised fresh with a warning.
TEST(NnBertPretrained, BaseCheckpointGetsAFreshClassifier) {
  manual_seed(23);
  BertConfig c = tiny_config();
  c.initializer_range = 0.5;
  BertModel base(c);
  testing::TempDir dir;
  base.save_pretrained(dir.path());
  EXPECT_EQ(io::SafetensorsFile(dir.file("model.safetensors")).contains("embeddings.word_embeddings.weight"), true);

  std::ostringstream log;
  auto model = BertForSequenceClassification::from_pretrained(dir.path(), {.num_labels = 5, .log = &log});
  EXPECT_TRUE(testing::contains(log.str(), "classifier.bias, classifier.weight not in")) << log.str();
  EXPECT_TRUE(testing::contains(log.str(), "newly initialised")) << log.str();
  EXPECT_EQ(model->config.num_labels, 5);
  EXPECT_EQ(model->classifier->weight.shape(), (Shape{5, 8}));
  EXPECT_EQ(max_diff(model->bert->encoder->state_dict().at("layer.1.output.dense.weight"),
                     base.encoder->state_dict().at("layer.1.output.dense.weight")),
            0.0);
  // Hugging Face's initialisation for the new head: N(0, initializer_range), zero bias.
  EXPECT_GT(testing::moments_of(model->classifier->weight).std, 0.2);
  EXPECT_EQ(abs(model->classifier->bias).max().item<double>(), 0.0);

  // And back: a task checkpoint loads into BertModel, its head ignored with a warning.
  testing::TempDir task_dir;
  model->save_pretrained(task_dir.path());
  std::ostringstream log2;
  auto encoder_only = BertModel::from_pretrained(task_dir.path(), {.log = &log2});
  EXPECT_TRUE(testing::contains(log2.str(), "ignored 2 weights of heads")) << log2.str();
  EXPECT_EQ(max_diff(encoder_only->pooler->dense->weight, base.pooler->dense->weight), 0.0);
}

// The original BERT release: LayerNorm gamma/beta, pre-training heads, a saved
// position_ids buffer. All load as Hugging Face loads them.
TEST(NnBertPretrained, OldStyleCheckpointNamesLoad) {
  manual_seed(24);
  BertForSequenceClassification model(tiny_config(2));
  nn::StateDict state;
  for (const auto& [name, t] : model.bert->state_dict()) {
    std::string key = "bert." + name;
    if (key.ends_with("LayerNorm.weight")) key.replace(key.size() - 6, 6, "gamma");
    if (key.ends_with("LayerNorm.bias")) key.replace(key.size() - 4, 4, "beta");
    state[key] = t;
  }
  state["bert.embeddings.position_ids"] = arange(16).unsqueeze(0);
  state["cls.predictions.bias"] = zeros({40});
  state["cls.seq_relationship.weight"] = zeros({2, 8});
  testing::TempDir dir;
  io::save_safetensors(dir.file("model.safetensors"), state);
  tiny_config(2).save(dir.file("config.json"));
  std::ostringstream log;
  auto loaded = BertForSequenceClassification::from_pretrained(dir.path(), {.log = &log});
  EXPECT_TRUE(testing::contains(log.str(), "ignored 2 weights of heads")) << log.str();
  EXPECT_EQ(max_diff(loaded->bert->embeddings->LayerNorm->weight, model.bert->embeddings->LayerNorm->weight), 0.0);
  EXPECT_EQ(max_diff(loaded->bert->encoder->state_dict().at("layer.0.output.LayerNorm.bias"),
                     model.bert->encoder->state_dict().at("layer.0.output.LayerNorm.bias")),
            0.0);
}

TEST(NnBertPretrained, CheckpointsThatDoNotFitAreErrorsNamingTheKeys) {
  manual_seed(25);
  BertForSequenceClassification model(tiny_config());
  testing::TempDir dir;
  model.save_pretrained(dir.path());
  const std::string weights = dir.file("model.safetensors");

  // Another label count than the checkpoint's classifier.
  std::string e = error_of([&] { BertForSequenceClassification::from_pretrained(dir.path(), {.num_labels = 2}); });
  EXPECT_TRUE(testing::contains(e, weights)) << e;
  EXPECT_TRUE(testing::contains(e, "classifier.weight is [3, 8], the model's classifier.weight is [2, 8]")) << e;

  // An encoder weight missing.
  nn::StateDict state = model.state_dict();
  state.erase("bert.encoder.layer.1.attention.self.key.weight");
  io::save_safetensors(weights, state);
  e = error_of([&] { BertForSequenceClassification::from_pretrained(dir.path()); });
  EXPECT_TRUE(testing::contains(e,
                                "lacks weights of BertForSequenceClassification: "
                                "bert.encoder.layer.1.attention.self.key.weight"))
      << e;

  // A weight the model does not have.
  state = model.state_dict();
  state["bert.encoder.layer.2.output.dense.weight"] = zeros({8, 12});
  io::save_safetensors(weights, state);
  e = error_of([&] { BertForSequenceClassification::from_pretrained(dir.path()); });
  EXPECT_TRUE(testing::contains(e, "does not have: bert.encoder.layer.2.output.dense.weight")) << e;
}

TEST(NnBertPretrained, MissingFoldersAndFilesExplainWhatToDo) {
  // A hub name: no network, so say how to fetch the folder elsewhere.
  std::string e = error_of([] { BertForSequenceClassification::from_pretrained("bert-base-uncased"); });
  EXPECT_TRUE(testing::contains(e, "never downloads")) << e;
  EXPECT_TRUE(testing::contains(e, "no network access")) << e;
  EXPECT_TRUE(testing::contains(e, "huggingface-cli download bert-base-uncased --local-dir bert-base-uncased")) << e;
  e = error_of([] { BertModel::from_pretrained("google-bert/bert-base-cased/"); });
  EXPECT_TRUE(testing::contains(e, "download google-bert/bert-base-cased --local-dir bert-base-cased\n")) << e;

  testing::TempDir dir;
  const std::string file = dir.write("weights.bin", "x");
  e = error_of([&] { BertModel::from_pretrained(file); });
  EXPECT_TRUE(testing::contains(e, "is a file; pass the model folder")) << e;

  e = error_of([&] { BertModel::from_pretrained(dir.path()); });
  EXPECT_TRUE(testing::contains(e, "config.json is missing")) << e;
  EXPECT_TRUE(testing::contains(e, "weights.bin")) << e;

  tiny_config().save(dir.file("config.json"));
  e = error_of([&] { BertModel::from_pretrained(dir.path()); });
  EXPECT_TRUE(testing::contains(e, dir.file("model.safetensors") + " is missing")) << e;

  dir.write("pytorch_model.bin", "pickle");
  e = error_of([&] { BertModel::from_pretrained(dir.path()); });
  EXPECT_TRUE(testing::contains(e, "only pytorch_model.bin")) << e;
  EXPECT_TRUE(testing::contains(e, "safe_serialization=True")) << e;

  // A broken config.json names the file and the field.
  dir.write("config.json", R"({"hidden_size": 10, "num_attention_heads": 3})");
  e = error_of([&] { BertModel::from_pretrained(dir.path()); });
  EXPECT_TRUE(testing::contains(e, dir.file("config.json") + ": field \"num_attention_heads\"")) << e;
}

TEST(NnBertPretrained, ShardedCheckpointsLoadThroughTheirIndex) {
  manual_seed(26);
  BertModel model(tiny_config());
  testing::TempDir dir;
  tiny_config().save(dir.file("config.json"));
  nn::StateDict first, second;
  nlohmann::json index;
  for (const auto& [name, t] : model.state_dict()) {
    const bool in_first = name.starts_with("embeddings.");
    (in_first ? first : second)[name] = t;
    index["weight_map"][name] = in_first ? "model-00001-of-00002.safetensors" : "model-00002-of-00002.safetensors";
  }
  io::save_safetensors(dir.file("model-00001-of-00002.safetensors"), first);
  io::save_safetensors(dir.file("model-00002-of-00002.safetensors"), second);
  dir.write("model.safetensors.index.json", index.dump());
  auto loaded = BertModel::from_pretrained(dir.path(), {.log = nullptr});
  for (const auto& [name, t] : model.state_dict()) EXPECT_EQ(max_diff(loaded->state_dict().at(name), t), 0.0) << name;
}

TEST(NnBertPretrained, AnIndexNeverNamesAShardOutsideTheModelFolder) {
  manual_seed(27);
  BertModel model(tiny_config());
  testing::TempDir root;
  std::filesystem::create_directories(root.file("model"));
  std::filesystem::create_directories(root.file("elsewhere"));
  tiny_config().save(root.file("model/config.json"));
  io::save_safetensors(root.file("elsewhere/weights.safetensors"), model.state_dict());
  for (const std::string& shard : {std::string("../elsewhere/weights.safetensors"),
                                   root.file("elsewhere/weights.safetensors"), std::string("sub/../../x")}) {
    nlohmann::json index;
    for (const auto& [name, t] : model.state_dict()) index["weight_map"][name] = shard;
    root.write("model/model.safetensors.index.json", index.dump());
    std::string e = error_of([&] { BertModel::from_pretrained(root.file("model"), {.log = nullptr}); });
    EXPECT_TRUE(testing::contains(e, "which is not a file inside the model folder")) << shard << ": " << e;
  }
}

TEST(NnBertPretrained, AShardIsNeverReadThroughASymlinkedSubFolder) {
  manual_seed(28);
  BertModel model(tiny_config());
  testing::TempDir root;
  std::filesystem::create_directories(root.file("model"));
  std::filesystem::create_directories(root.file("elsewhere"));
  tiny_config().save(root.file("model/config.json"));
  io::save_safetensors(root.file("elsewhere/weights.safetensors"), model.state_dict());
  std::filesystem::create_directory_symlink(root.file("elsewhere"), root.file("model/sub"));
  nlohmann::json index;
  for (const auto& [name, t] : model.state_dict()) index["weight_map"][name] = "sub/weights.safetensors";
  root.write("model/model.safetensors.index.json", index.dump());
  std::string e = error_of([&] { BertModel::from_pretrained(root.file("model"), {.log = nullptr}); });
  EXPECT_TRUE(testing::contains(e, "reached through the symlink " + root.file("model/sub"))) << e;
}

}  // namespace
}  // namespace hearth
