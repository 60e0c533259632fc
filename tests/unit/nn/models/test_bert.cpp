// BertModel and BertForSequenceClassification: layout and names against
// transformers, initialisation, masking, losses, and the golden train step.
#include <cmath>
#include <fstream>
#include <sstream>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "hearth/autograd/grad_mode.h"
#include "hearth/core/device_runtime.h"
#include "hearth/core/generator.h"
#include "hearth/io/safetensors.h"
#include "hearth/nn/init.h"
#include "hearth/nn/linear.h"
#include "hearth/nn/models/bert.h"
#include "hearth/ops/elementwise.h"
#include "hearth/ops/factory.h"
#include "hearth/ops/nn_functional.h"
#include "hearth/ops/reduction.h"
#include "hearth/ops/view.h"
#include "tests/support/bert_golden.h"
#include "tests/unit/nn/nn_testing.h"

namespace hearth {
namespace {

using nn::models::BertConfig;
using nn::models::BertForSequenceClassification;
using nn::models::BertModel;

BertConfig small_config() {
  BertConfig c;
  c.vocab_size = 50;
  c.hidden_size = 16;
  c.num_hidden_layers = 2;
  c.num_attention_heads = 4;
  c.intermediate_size = 24;
  c.max_position_embeddings = 20;
  c.hidden_dropout_prob = 0.0;
  c.attention_probs_dropout_prob = 0.0;
  c.num_labels = 3;
  return c;
}

TEST(NnBert, ForwardShapes) {
  manual_seed(1);
  BertModel base(small_config());
  Tensor ids = randint(1, 50, {2, 7});
  auto out = base.forward(ids, Tensor(), ones({2, 7}, DType::int64));
  EXPECT_EQ(out.last_hidden_state.shape(), (Shape{2, 7, 16}));
  EXPECT_EQ(out.pooler_output.shape(), (Shape{2, 16}));
  EXPECT_THROW(base.forward(ids), NotImplementedError);

  BertModel no_pooler(small_config(), /*add_pooling_layer=*/false);
  EXPECT_FALSE(no_pooler.forward(ids, Tensor(), Tensor()).pooler_output.defined());
  EXPECT_EQ(no_pooler.state_dict().count("pooler.dense.weight"), 0u);

  BertForSequenceClassification model(small_config());
  EXPECT_EQ(model.forward(ids, zeros({2, 7}, DType::int64), Tensor()).shape(), (Shape{2, 3}));
  // input_ids alone means no padding and segment 0.
  testing::expect_close(model.forward(ids), model.forward(ids, zeros({2, 7}, DType::int64), ones({2, 7})), 0.0);
}

TEST(NnBert, InputErrorsNameWhatWasExpected) {
  BertForSequenceClassification model(small_config());
  auto message_of = [&](const Tensor& ids, const Tensor& types, const Tensor& mask) {
    try {
      model.forward(ids, types, mask);
    } catch (const Error& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  const Tensor ids = randint(1, 50, {2, 5});
  EXPECT_TRUE(testing::contains(message_of(randn({2, 5}), Tensor(), Tensor()), "input_ids [batch, seq_len] of int64"));
  EXPECT_TRUE(
      testing::contains(message_of(randint(1, 50, {1, 21}), Tensor(), Tensor()), "exceeds max_position_embeddings 20"));
  EXPECT_TRUE(testing::contains(message_of(ids, zeros({2, 4}, DType::int64), Tensor()), "token_type_ids"));
  EXPECT_TRUE(testing::contains(message_of(ids, Tensor(), ones({2, 6})), "expected attention_mask [2, 5]"));
}

// Names and shapes equal transformers' BertForSequenceClassification(bert-base, num_labels=2), in order.
TEST(NnBert, BertBaseMatchesTransformersKeysAndParameterCount) {
  std::ifstream in(std::string(HEARTH_FIXTURES_DIR) + "/golden/hf_bert_keys.json");
  ASSERT_TRUE(in.good()) << "tests/fixtures/golden/hf_bert_keys.json is missing";
  const nlohmann::json keys = nlohmann::json::parse(in).at("bert-base-uncased-seqcls");

  nn::init::SkipInitGuard layout_only;                // the 110M random draws are not under test here
  BertForSequenceClassification model(BertConfig{});  // the defaults are bert-base-uncased's
  const nn::StateDict state = model.state_dict();
  std::vector<std::pair<std::string, Shape>> ours, theirs;
  for (const auto& entry : keys) theirs.emplace_back(entry.at(0).get<std::string>(), entry.at(1).get<Shape>());
  // state_dict is sorted; named_parameters keeps the registration order, which is PyTorch's.
  for (const auto& [name, p] : model.named_parameters()) ours.emplace_back(name, p.shape());
  EXPECT_EQ(ours, theirs);
  EXPECT_EQ(state.size(), theirs.size()) << "no persistent buffers: position_ids is not in the state dict";

  int64_t count = 0;
  for (const Tensor& p : model.parameters()) count += p.numel();
  EXPECT_EQ(count, 109483778);
  EXPECT_EQ(static_cast<double>(count), model.config.parameter_count());
  EXPECT_EQ(model.config.num_labels, 2);
}

TEST(NnBert, ModelBeyondMemoryIsRefusedBeforeAllocation) {
  BertConfig config;
  config.vocab_size = BertConfig::kMaxSize;
  config.hidden_size = 1 << 20;
  config.num_attention_heads = 16;
  try {
    BertForSequenceClassification model(config);
    FAIL() << "expected OutOfMemoryError";
  } catch (const OutOfMemoryError& e) {
    EXPECT_TRUE(testing::contains(e.what(), "[BertForSequenceClassification]")) << e.what();
    EXPECT_TRUE(testing::contains(e.what(), "GiB as float32, more than this machine's")) << e.what();
    EXPECT_TRUE(testing::contains(e.what(), "vocab_size 2147483647")) << e.what();
  }
}

TEST(NnBert, HuggingFaceInitialisation) {
  manual_seed(5);
  BertConfig c = small_config();
  c.hidden_size = 64;
  c.intermediate_size = 96;
  c.vocab_size = 200;
  c.initializer_range = 0.3;
  BertForSequenceClassification model(c);
  for (const auto& [name, p] : model.named_parameters()) {
    const testing::Moments m = testing::moments_of(p);
    const bool layer_norm = name.find("LayerNorm") != std::string::npos;
    if (layer_norm && name.ends_with(".weight")) {
      EXPECT_EQ(m.min, 1.0) << name;
      EXPECT_EQ(m.max, 1.0) << name;
    } else if (name.ends_with(".bias")) {
      EXPECT_EQ(m.min, 0.0) << name;
      EXPECT_EQ(m.max, 0.0) << name;
    } else if (p.numel() >= 1000) {
      EXPECT_NEAR(m.std, 0.3, 0.03) << name;
      EXPECT_NEAR(m.mean, 0.0, 0.03) << name;
    }
  }
  // The padding row (pad_token_id 0) of the word embeddings starts at zero.
  const Tensor pad_row = select(model.bert->embeddings->word_embeddings->weight, 0, 0);
  EXPECT_EQ(abs(pad_row).sum().item<double>(), 0.0);
  EXPECT_GT(abs(select(model.bert->embeddings->word_embeddings->weight, 0, 1)).sum().item<double>(), 0.0);
}

TEST(NnBert, ExtendedAttentionMaskIsAdditiveAndBroadcastable) {
  Tensor mask = tensor(std::vector<int64_t>{1, 1, 0, 1, 0, 0}, {2, 3});
  Tensor ext = nn::models::extended_attention_mask(mask, DType::float32);
  EXPECT_EQ(ext.shape(), (Shape{2, 1, 1, 3}));
  const std::vector<float> v = ext.to_vector<float>();
  const float low = std::numeric_limits<float>::lowest();
  EXPECT_EQ(v, (std::vector<float>{0, 0, low, 0, low, low}));
  EXPECT_EQ(nn::models::extended_attention_mask(mask, DType::float16).to_vector<double>()[2], -65504.0);
  EXPECT_EQ(nn::models::extended_attention_mask(ones({2, 4, 4}), DType::float32).shape(), (Shape{2, 1, 4, 4}));
}

// Padding does not change the unpadded rows' logits, whatever the padded ids
// are; without the mask it would.
TEST(NnBert, PaddingDoesNotChangeUnpaddedLogits) {
  manual_seed(11);
  BertConfig c = small_config();
  c.initializer_range = 0.5;  // weights large enough that leaked padding shows
  BertForSequenceClassification model(c);
  model.eval();
  NoGradGuard no_grad;
  const std::vector<int64_t> sentence = {2, 17, 9, 33, 3};  // 5 tokens
  Tensor alone = model.forward(tensor(sentence, {1, 5}), tensor(std::vector<int64_t>{0, 0, 0, 1, 1}, {1, 5}), Tensor());

  // Row 0: the sentence padded to 9 with arbitrary ids; row 1: another 9-token sentence.
  std::vector<int64_t> ids = sentence, types = {0, 0, 0, 1, 1}, mask = {1, 1, 1, 1, 1};
  for (int i = 0; i < 4; ++i) ids.push_back(40 + i), types.push_back(1), mask.push_back(0);
  for (int i = 0; i < 9; ++i) ids.push_back(5 + i), types.push_back(0), mask.push_back(1);
  Tensor batch_ids = tensor(ids, {2, 9}), batch_types = tensor(types, {2, 9}), batch_mask = tensor(mask, {2, 9});
  Tensor padded = model.forward(batch_ids, batch_types, batch_mask);
  testing::expect_close(select(padded, 0, 0), select(alone, 0, 0), 1e-5);

  // Row 1 alone gives the same logits as in the batch.
  Tensor row1 = model.forward(narrow(batch_ids, 0, 1, 1), narrow(batch_types, 0, 1, 1), Tensor());
  testing::expect_close(select(padded, 0, 1), select(row1, 0, 0), 1e-5);

  // Without the mask, the padding leaks into row 0.
  Tensor unmasked = model.forward(batch_ids, batch_types, Tensor());
  EXPECT_GT(abs(sub(select(unmasked, 0, 0), select(alone, 0, 0))).max().item<double>(), 1e-3);
}

TEST(NnBert, DropoutActsOnlyWhileTraining) {
  manual_seed(2);
  BertConfig c = small_config();
  c.hidden_dropout_prob = 0.3;
  c.attention_probs_dropout_prob = 0.3;
  BertForSequenceClassification model(c);
  Tensor ids = randint(1, 50, {2, 6});
  Tensor a = model.forward(ids), b = model.forward(ids);
  EXPECT_GT(abs(sub(a, b)).max().item<double>(), 1e-6) << "training forwards draw different masks";
  model.eval();
  testing::expect_close(model.forward(ids), model.forward(ids), 0.0);
}

TEST(NnBert, LossesFollowTheProblemType) {
  manual_seed(4);
  NoGradGuard no_grad;
  BertForSequenceClassification model(small_config());
  Tensor logits = randn({4, 3});
  Tensor classes = tensor(std::vector<int64_t>{0, 2, 1, 2});
  EXPECT_EQ(model.problem_type(classes), "single_label_classification");
  testing::expect_close(model.compute_loss(logits, classes), cross_entropy(logits, classes), 1e-7);
  testing::expect_close(model.compute_loss(logits, classes.to(DType::int32)), cross_entropy(logits, classes), 1e-7);

  // Floating labels of the logits' shape: multi-label, binary cross entropy with logits.
  Tensor targets = tensor({1, 0, 1, 0, 0, 1, 1, 1, 0, 0, 0, 1}).reshape({4, 3});
  EXPECT_EQ(model.problem_type(targets), "multi_label_classification");
  Tensor p = sigmoid(logits);
  Tensor bce = neg(mean(add(mul(targets, log(p)), mul(rsub(targets, 1), log(rsub(p, 1))))));
  testing::expect_close(model.compute_loss(logits, targets), bce, 1e-6);

  // One label: regression, mean squared error against [B] targets.
  BertConfig c = small_config();
  c.num_labels = 1;
  BertForSequenceClassification regressor(c);
  Tensor scores = randn({4, 1}), gold = tensor({0.5f, 1.0f, -2.0f, 3.0f});
  EXPECT_EQ(regressor.problem_type(gold), "regression");
  testing::expect_close(regressor.compute_loss(scores, gold), mse_loss(scores.reshape({4}), gold), 1e-7);

  // problem_type in the config wins.
  model.config.problem_type = "regression";
  testing::expect_close(model.compute_loss(logits, targets), mse_loss(logits, targets), 1e-7);
  model.config.problem_type = "";
  EXPECT_THROW(model.compute_loss(logits, tensor(std::vector<int64_t>{0, 1})), ShapeError);
  EXPECT_THROW(model.compute_loss(randn({4, 2}), classes), ShapeError);

  // forward with labels returns both; without, the loss is undefined.
  Tensor ids = randint(1, 50, {4, 5});
  auto out = model.forward(ids, Tensor(), Tensor(), classes);
  testing::expect_close(out.loss, cross_entropy(out.logits, classes), 1e-7);
  EXPECT_FALSE(model.forward(ids, Tensor(), Tensor(), Tensor()).loss.defined());
}

TEST(NnBert, FitsASmallBatch) {
  manual_seed(8);
  BertForSequenceClassification model(small_config());
  Tensor ids = randint(1, 50, {6, 8});
  Tensor labels = tensor(std::vector<int64_t>{0, 1, 2, 0, 1, 2});
  double first = 0, last = 0;
  for (int step = 0; step < 30; ++step) {
    model.zero_grad();
    Tensor loss = model.forward(ids, Tensor(), Tensor(), labels).loss;
    loss.backward();
    NoGradGuard no_grad;
    for (const Tensor& p : model.parameters()) p.add_(p.grad(), -0.1);
    (step == 0 ? first : last) = loss.item<double>();
  }
  EXPECT_LT(last, 0.5 * first) << "first " << first << " last " << last;
}

// ---- golden: the same numbers as transformers ----

TEST(NnBertGolden, CheckpointLoadsStrictlyWithItsOwnNames) {
  io::SafetensorsFile file(testing::bert_tiny_dir() + "/model.safetensors");
  auto model = BertForSequenceClassification::from_pretrained(testing::bert_tiny_dir(), {.log = nullptr});
  std::vector<std::string> ours;
  for (const auto& [name, _] : model->state_dict()) ours.push_back(name);
  EXPECT_EQ(ours, file.names()) << "model.safetensors holds exactly the model's state dict";
  EXPECT_EQ(model->config.num_labels, 3);
  EXPECT_EQ(model->config.intermediate_size, 37);
  for (const std::string& name : file.names())
    EXPECT_EQ(abs(sub(model->state_dict().at(name), file.get(name))).max().item<double>(), 0.0) << name;
}

TEST(NnBertGolden, TrainStepAndEvalMatchTransformers) {
  const double worst = testing::check_bert_golden(Device(), 1e-4);
  RecordProperty("worst_relative_error", std::to_string(worst));
}

// Lower precision: the additive mask uses the dtype's own lowest value, so
// bfloat16 and float16 models stay finite and close to float32.
TEST(NnBertGolden, HalfPrecisionForwardStaysCloseToFloat32) {
  auto model = BertForSequenceClassification::from_pretrained(testing::bert_tiny_dir(), {.log = nullptr});
  model->eval();
  std::map<std::string, Tensor> io = io::load_safetensors(testing::bert_tiny_io_path());
  NoGradGuard no_grad;
  const Tensor reference = model->forward(io["input_ids"], io["token_type_ids"], io["attention_mask"]);
  for (DType dtype : {DType::bfloat16, DType::float16}) {
    auto half = BertForSequenceClassification::from_pretrained(testing::bert_tiny_dir(), {.log = nullptr});
    half->to(dtype);
    half->eval();
    const Tensor logits = half->forward(io["input_ids"], io["token_type_ids"], io["attention_mask"]);
    EXPECT_EQ(logits.dtype(), dtype);
    EXPECT_LT(testing::max_relative_error(logits, reference), 0.05) << dtype_name(dtype);
  }
}

// Activation checkpointing gives the same loss and gradients as keeping every
// activation (dropout on: the recomputation draws the same masks), and keeps
// less memory between forward and backward.
TEST(NnBert, GradientCheckpointingChangesNothingButMemory) {
  BertConfig c = small_config();
  c.hidden_dropout_prob = 0.1;
  c.attention_probs_dropout_prob = 0.1;
  c.num_hidden_layers = 3;
  c.hidden_size = 64;
  c.intermediate_size = 128;
  DeviceRuntime& cpu = device_runtime(kCpu);
  auto run = [&](bool checkpointed, size_t* held) {
    manual_seed(8);
    nn::models::BertForSequenceClassification m(c);
    m.train();
    EXPECT_EQ(m.gradient_checkpointing_enable(checkpointed), true);
    const Tensor ids = randint(0, c.vocab_size, {4, 16}, DType::int64);
    const Tensor labels = randint(0, c.num_labels, {4}, DType::int64);
    const size_t before = cpu.memory_stats(0).active;
    Tensor loss = m.forward(ids, Tensor(), Tensor(), labels).loss;
    *held = cpu.memory_stats(0).active - before;
    loss.backward();
    std::vector<Tensor> grads;
    for (const Tensor& p : m.parameters()) grads.push_back(p.grad());
    return std::make_pair(loss.item<float>(), grads);
  };
  size_t plain_held = 0, ckpt_held = 0;
  const auto plain = run(false, &plain_held);
  const auto ckpt = run(true, &ckpt_held);
  EXPECT_EQ(ckpt.first, plain.first);
  ASSERT_EQ(ckpt.second.size(), plain.second.size());
  for (size_t i = 0; i < plain.second.size(); ++i) {
    ASSERT_TRUE(ckpt.second[i].defined()) << "parameter " << i;
    EXPECT_EQ(amax(abs(sub(ckpt.second[i], plain.second[i]))).item<float>(), 0.0f) << "parameter " << i;
  }
  EXPECT_LT(ckpt_held * 2, plain_held) << ckpt_held << " vs " << plain_held << " bytes held after the forward";
}

// BertSelfOutput and BertOutput run dropout, the residual add and LayerNorm as
// one op (dropout_add_layer_norm); with it switched off they run the three
// ops, and the loss and every gradient are the same bits, dropout on.
TEST(NnBert, FusedResidualLayerNormChangesNoResult) {
  BertConfig c = small_config();
  c.hidden_dropout_prob = 0.2;
  c.attention_probs_dropout_prob = 0.1;
  auto run = [&](bool fused) {
    set_fused_layer_norm_enabled(fused);
    manual_seed(12);
    BertForSequenceClassification m(c);
    m.train();
    const Tensor ids = randint(0, c.vocab_size, {3, 9}, DType::int64);
    const Tensor labels = randint(0, c.num_labels, {3}, DType::int64);
    Tensor loss = m.forward(ids, Tensor(), Tensor(), labels).loss;
    loss.backward();
    std::vector<Tensor> grads;
    for (const Tensor& p : m.parameters()) grads.push_back(p.grad());
    return std::make_pair(loss.item<float>(), grads);
  };
  const auto composite = run(false);
  const auto fused = run(true);
  set_fused_layer_norm_enabled(true);
  EXPECT_EQ(fused.first, composite.first);
  ASSERT_EQ(fused.second.size(), composite.second.size());
  for (size_t i = 0; i < fused.second.size(); ++i) {
    ASSERT_TRUE(fused.second[i].defined()) << "parameter " << i;
    EXPECT_EQ(amax(abs(sub(fused.second[i], composite.second[i]))).item<float>(), 0.0f) << "parameter " << i;
  }
}

TEST(NnBert, ModelsWithoutCheckpointableBlocksSaySo) {
  nn::Linear fc(3, 2);
  EXPECT_FALSE(fc.gradient_checkpointing_enable());
}

}  // namespace
}  // namespace hearth
