// BertConfig: Hugging Face's config.json, read strictly and written back.
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "hearth/core/errors.h"
#include "hearth/nn/models/bert_config.h"
#include "tests/support/temp_dir.h"
#include "tests/unit/nn/nn_testing.h"

namespace hearth {
namespace {

using nn::models::BertConfig;

std::string error_of(const std::string& json_text) {
  try {
    BertConfig::from_json_string(json_text, "models/x/config.json");
  } catch (const ValueError& e) {
    return e.what();
  }
  return "no error";
}

TEST(NnBertConfig, DefaultsAreBertBaseUncased) {
  BertConfig c = BertConfig::from_json_string("{}");
  EXPECT_EQ(c.vocab_size, 30522);
  EXPECT_EQ(c.hidden_size, 768);
  EXPECT_EQ(c.num_hidden_layers, 12);
  EXPECT_EQ(c.num_attention_heads, 12);
  EXPECT_EQ(c.intermediate_size, 3072);
  EXPECT_EQ(c.hidden_act, "gelu");
  EXPECT_EQ(c.hidden_dropout_prob, 0.1);
  EXPECT_EQ(c.attention_probs_dropout_prob, 0.1);
  EXPECT_EQ(c.max_position_embeddings, 512);
  EXPECT_EQ(c.type_vocab_size, 2);
  EXPECT_EQ(c.initializer_range, 0.02);
  EXPECT_EQ(c.layer_norm_eps, 1e-12);
  EXPECT_EQ(c.pad_token_id, 0);
  EXPECT_EQ(c.num_labels, 2);
  EXPECT_EQ(c.label_name(1), "LABEL_1");
  EXPECT_FALSE(c.classifier_dropout.has_value());
  EXPECT_EQ(c.classifier_dropout_prob(), 0.1);
  EXPECT_EQ(c.head_size(), 64);
}

TEST(NnBertConfig, ReadsTheFixtureFolderConfig) {
  BertConfig c = BertConfig::from_json_file(std::string(HEARTH_FIXTURES_DIR) + "/golden/bert_tiny/config.json");
  EXPECT_EQ(c.vocab_size, 99);
  EXPECT_EQ(c.hidden_size, 32);
  EXPECT_EQ(c.num_hidden_layers, 2);
  EXPECT_EQ(c.num_attention_heads, 4);
  EXPECT_EQ(c.intermediate_size, 37);
  EXPECT_EQ(c.max_position_embeddings, 64);
  EXPECT_EQ(c.hidden_dropout_prob, 0.0);
  EXPECT_EQ(c.num_labels, 3);
  EXPECT_EQ(c.label_name(2), "LABEL_2");
  EXPECT_EQ(c.extra_fields.count("transformers_version"), 1u);
}

TEST(NnBertConfig, RoundTripKeepsEveryField) {
  BertConfig c;
  c.hidden_act = "gelu_new";
  c.classifier_dropout = 0.25;
  c.pad_token_id.reset();
  c.num_labels = 3;
  c.id2label = {"negative", "neutral", "positive"};
  c.problem_type = "single_label_classification";
  c.extra_fields["tokenizer_class"] = "\"BertTokenizer\"";
  const std::string text = c.to_json_string({"BertForSequenceClassification"});
  const nlohmann::json j = nlohmann::json::parse(text);
  EXPECT_EQ(j["model_type"], "bert");
  EXPECT_EQ(j["architectures"][0], "BertForSequenceClassification");
  EXPECT_EQ(j["label2id"]["positive"], 2);
  EXPECT_EQ(j["id2label"]["0"], "negative");
  EXPECT_TRUE(j["pad_token_id"].is_null());

  BertConfig back = BertConfig::from_json_string(text);
  EXPECT_EQ(back.hidden_act, "gelu_new");
  EXPECT_EQ(back.classifier_dropout, 0.25);
  EXPECT_FALSE(back.pad_token_id.has_value());
  EXPECT_EQ(back.id2label, c.id2label);
  EXPECT_EQ(back.problem_type, c.problem_type);
  EXPECT_EQ(back.extra_fields, c.extra_fields);
  EXPECT_EQ(back.to_json_string({"BertForSequenceClassification"}), text);

  testing::TempDir dir;
  c.save(dir.file("config.json"));
  EXPECT_EQ(BertConfig::from_json_file(dir.file("config.json")).id2label, c.id2label);
}

TEST(NnBertConfig, LabelsFromNumLabelsOrLabel2id) {
  EXPECT_EQ(BertConfig::from_json_string(R"({"num_labels": 5})").num_labels, 5);
  BertConfig c = BertConfig::from_json_string(R"({"label2id": {"yes": 1, "no": 0}})");
  EXPECT_EQ(c.num_labels, 2);
  EXPECT_EQ(c.label_name(0), "no");
  c.set_num_labels(4);
  EXPECT_EQ(c.label_name(3), "LABEL_3");
  EXPECT_TRUE(c.id2label.empty());
  EXPECT_THROW(c.set_num_labels(0), ValueError);
}

TEST(NnBertConfig, ErrorsNameTheFileAndTheField) {
  auto expect_error = [](const std::string& text, const std::string& field, const std::string& part) {
    const std::string e = error_of(text);
    EXPECT_TRUE(testing::contains(e, "[BertConfig] models/x/config.json: field \"" + field + "\"")) << e;
    EXPECT_TRUE(testing::contains(e, part)) << e;
  };
  expect_error(R"({"hidden_size": "big"})", "hidden_size", "expected an integer, got \"big\"");
  expect_error(R"({"hidden_size": 100})", "num_attention_heads", "not a multiple");
  expect_error(R"({"hidden_act": "swish"})", "hidden_act", "got \"swish\"");
  expect_error(R"({"hidden_dropout_prob": 1.5})", "hidden_dropout_prob", "[0, 1)");
  expect_error(R"({"num_labels": 2, "id2label": {"0": "a", "1": "b", "2": "c"}})", "num_labels", "disagrees");
  expect_error(R"({"id2label": {"0": "a", "2": "b"}})", "id2label", "once each");
  expect_error(R"({"model_type": "roberta"})", "model_type", "expected \"bert\"");
  expect_error(R"({"position_embedding_type": "relative_key"})", "position_embedding_type", "absolute");
  expect_error(R"({"is_decoder": true})", "is_decoder", "expected false");
  expect_error(R"({"pad_token_id": 40000})", "pad_token_id", "vocab_size");
  expect_error(R"({"problem_type": "ranking"})", "problem_type", "ranking");
  EXPECT_TRUE(testing::contains(error_of("{not json"), "models/x/config.json: not valid JSON"));
  // Sizes whose products wrap a tensor's byte count (2^57 + 1, 2^58) are refused by name.
  for (const char* field : {"vocab_size", "max_position_embeddings", "type_vocab_size", "hidden_size",
                            "intermediate_size", "num_hidden_layers", "num_attention_heads"}) {
    for (const char* value : {"144115188075855873", "288230376151711744"})
      expect_error(std::string("{\"") + field + "\": " + value + "}", field, std::string("got ") + value);
  }
  expect_error(R"({"num_labels": 100000000})", "num_labels", "expected at most");
  // 2^64-1 wrapped to -1 and was reported as "got -1".
  expect_error(R"({"vocab_size": 18446744073709551615})", "vocab_size", "got 18446744073709551615");
  // 2^24 labels passed once and took minutes (and gigabytes) to write back as
  // id2label and label2id; the largest accepted count writes back promptly.
  expect_error(R"({"num_labels": 16777216})", "num_labels", "expected at most 65536");
  EXPECT_NE(BertConfig::from_json_string(R"({"num_labels": 65536})", "c").to_json_string().find("LABEL_65535"),
            std::string::npos);
  EXPECT_THROW(BertConfig::from_json_file("/no/such/config.json"), IoError);
}

TEST(NnBertConfig, NestingAndUnknownFieldsAreBounded) {
  // Depth 100,000 overflowed the stack; a 60 KB field nested 100 deep became
  // a 1.8 GB config.json once re-indented.
  const std::string deep = R"({"junk": )" + std::string(100000, '[') + std::string(100000, ']') + "}";
  EXPECT_TRUE(testing::contains(error_of(deep), "models/x/config.json: arrays and objects nested 100001 levels deep"))
      << error_of(deep);
  const std::string nested = std::string(100, '[') + std::string(100, ']');
  const BertConfig c = BertConfig::from_json_string(R"({"junk": )" + nested + R"(, "kept": {"a": [1, 2]}, "big": ")" +
                                                    std::string(BertConfig::kMaxExtraBytes, 'x') + R"("})");
  EXPECT_EQ(c.extra_fields.count("junk"), 0u);
  EXPECT_EQ(c.extra_fields.count("big"), 0u);
  EXPECT_EQ(c.extra_fields.at("kept"), R"({"a":[1,2]})");
  EXPECT_LT(c.to_json_string().size(), 4096u);
}

TEST(NnBertConfig, ParameterCountOfBertBase) {
  // bert-base-uncased with a 2-label classifier: 109,483,778 parameters.
  EXPECT_DOUBLE_EQ(BertConfig{}.parameter_count(), 109483778.0);
}

}  // namespace
}  // namespace hearth
