#include "hearth/nn/models/bert_config.h"

#include <fstream>
#include <set>
#include <sstream>

#include <nlohmann/json.hpp>

#include "hearth/core/errors.h"
#include "hearth/io/atomic_file.h"
#include "hearth/io/file_checks.h"
#include "hearth/io/json_integer.h"
#include "hearth/io/json_limits.h"

namespace hearth::nn::models {
namespace {

using json = nlohmann::json;

// Fields read into BertConfig members; everything else is kept as extra_fields.
const std::set<std::string>& interpreted_fields() {
  static const std::set<std::string> names = {"vocab_size",
                                              "hidden_size",
                                              "num_hidden_layers",
                                              "num_attention_heads",
                                              "intermediate_size",
                                              "hidden_act",
                                              "hidden_dropout_prob",
                                              "attention_probs_dropout_prob",
                                              "max_position_embeddings",
                                              "type_vocab_size",
                                              "initializer_range",
                                              "layer_norm_eps",
                                              "pad_token_id",
                                              "position_embedding_type",
                                              "classifier_dropout",
                                              "num_labels",
                                              "id2label",
                                              "label2id",
                                              "problem_type",
                                              "model_type",
                                              "architectures"};
  return names;
}

[[noreturn]] void bad_field(const std::string& where, const std::string& field, const std::string& what) {
  HEARTH_THROW(ValueError, "[BertConfig] ", where, ": field \"", field, "\": ", what);
}

void read_int(const json& j, const char* name, const std::string& where, int64_t& out) {
  if (!j.contains(name)) return;
  const json& v = j.at(name);
  if (!v.is_number_integer()) bad_field(where, name, "expected an integer, got " + io::excerpt(v.dump()));
  // 2^64-1 read as int64 wrapped to -1 and was reported as "got -1".
  if (!io::json_integer_fits<int64_t>(v))
    bad_field(where, name, "expected an integer of at most 2^63-1, got " + v.dump());
  out = v.get<int64_t>();
}

void read_double(const json& j, const char* name, const std::string& where, double& out) {
  if (!j.contains(name)) return;
  const json& v = j.at(name);
  if (!v.is_number()) bad_field(where, name, "expected a number, got " + v.dump());
  out = v.get<double>();
}

void read_string(const json& j, const char* name, const std::string& where, std::string& out) {
  if (!j.contains(name)) return;
  const json& v = j.at(name);
  if (!v.is_string()) bad_field(where, name, "expected a string, got " + v.dump());
  out = v.get<std::string>();
}

// Keys "0".."n-1" of id2label, in id order.
std::vector<std::string> parse_id2label(const json& v, const std::string& where) {
  if (!v.is_object()) bad_field(where, "id2label", "expected an object of \"id\": \"name\", got " + v.dump());
  std::vector<std::string> names(v.size());
  std::vector<bool> seen(v.size(), false);
  for (const auto& [key, name] : v.items()) {
    size_t used = 0;
    int64_t id = -1;
    try {
      id = std::stoll(key, &used);
    } catch (const std::exception&) {
      used = 0;
    }
    if (used != key.size() || id < 0 || id >= static_cast<int64_t>(names.size()) || seen[id])
      bad_field(where, "id2label",
                "expected the ids 0.." + std::to_string(names.size() - 1) + " once each, got key \"" + key + "\"");
    if (!name.is_string()) bad_field(where, "id2label", "label " + key + " is not a string: " + name.dump());
    names[id] = name.get<std::string>();
    seen[id] = true;
  }
  return names;
}

std::vector<std::string> parse_label2id(const json& v, const std::string& where) {
  if (!v.is_object()) bad_field(where, "label2id", "expected an object of \"name\": id, got " + v.dump());
  std::vector<std::string> names(v.size());
  std::vector<bool> seen(v.size(), false);
  for (const auto& [name, id_json] : v.items()) {
    if (!id_json.is_number_integer())
      bad_field(where, "label2id", "the id of \"" + name + "\" is not an integer: " + id_json.dump());
    const int64_t id = id_json.get<int64_t>();
    if (id < 0 || id >= static_cast<int64_t>(names.size()) || seen[id])
      bad_field(where, "label2id",
                "expected the ids 0.." + std::to_string(names.size() - 1) + " once each, got " + std::to_string(id));
    names[id] = name;
    seen[id] = true;
  }
  return names;
}

std::string default_label(int64_t id) { return "LABEL_" + std::to_string(id); }

}  // namespace

void BertConfig::validate(const std::string& where) const {
  auto positive = [&](const char* name, int64_t v) {
    if (v <= 0) bad_field(where, name, "expected a positive integer, got " + std::to_string(v));
  };
  auto probability = [&](const char* name, double p) {
    if (!(p >= 0.0 && p < 1.0)) bad_field(where, name, "expected a probability in [0, 1), got " + std::to_string(p));
  };
  // Every size becomes a tensor dimension: beyond these, products of sizes
  // wrap and allocations are absurd (as the checkpoint reader bounds shapes).
  auto at_most = [&](const char* name, int64_t v, int64_t limit) {
    if (v > limit) bad_field(where, name, "expected at most " + std::to_string(limit) + ", got " + std::to_string(v));
  };
  positive("vocab_size", vocab_size);
  positive("hidden_size", hidden_size);
  if (num_hidden_layers < 0)
    bad_field(where, "num_hidden_layers", "expected a non-negative integer, got " + std::to_string(num_hidden_layers));
  positive("num_attention_heads", num_attention_heads);
  at_most("vocab_size", vocab_size, kMaxSize);
  at_most("hidden_size", hidden_size, kMaxSize);
  at_most("num_hidden_layers", num_hidden_layers, kMaxLayers);
  at_most("num_attention_heads", num_attention_heads, kMaxSize);
  at_most("intermediate_size", intermediate_size, kMaxSize);
  at_most("max_position_embeddings", max_position_embeddings, kMaxSize);
  at_most("type_vocab_size", type_vocab_size, kMaxSize);
  at_most("num_labels", num_labels, kMaxLabels);
  // Together the sizes must still give a model whose bytes an int64 can count.
  if (parameter_count() * 4.0 >= 9.2e18)
    bad_field(where, "hidden_size",
              std::to_string(hidden_size) + " with vocab_size " + std::to_string(vocab_size) + ", intermediate_size " +
                  std::to_string(intermediate_size) + " and num_hidden_layers " + std::to_string(num_hidden_layers) +
                  " gives a model of more bytes than fit in int64");
  if (hidden_size % num_attention_heads != 0)
    bad_field(where, "num_attention_heads",
              "hidden_size " + std::to_string(hidden_size) + " is not a multiple of num_attention_heads " +
                  std::to_string(num_attention_heads));
  positive("intermediate_size", intermediate_size);
  positive("max_position_embeddings", max_position_embeddings);
  positive("type_vocab_size", type_vocab_size);
  if (hidden_act != "gelu" && hidden_act != "gelu_new" && hidden_act != "gelu_pytorch_tanh" && hidden_act != "relu")
    bad_field(where, "hidden_act",
              "expected \"gelu\", \"gelu_new\", \"gelu_pytorch_tanh\" or \"relu\", got \"" + hidden_act + "\"");
  probability("hidden_dropout_prob", hidden_dropout_prob);
  probability("attention_probs_dropout_prob", attention_probs_dropout_prob);
  if (classifier_dropout) probability("classifier_dropout", *classifier_dropout);
  if (!(initializer_range >= 0.0))
    bad_field(where, "initializer_range", "expected a number >= 0, got " + std::to_string(initializer_range));
  if (!(layer_norm_eps > 0.0))
    bad_field(where, "layer_norm_eps", "expected a number > 0, got " + std::to_string(layer_norm_eps));
  if (pad_token_id && (*pad_token_id < 0 || *pad_token_id >= vocab_size))
    bad_field(
        where, "pad_token_id",
        "expected an id in [0, vocab_size " + std::to_string(vocab_size) + "), got " + std::to_string(*pad_token_id));
  if (position_embedding_type != "absolute")
    bad_field(where, "position_embedding_type",
              "only \"absolute\" position embeddings are supported, got \"" + position_embedding_type + "\"");
  positive("num_labels", num_labels);
  if (!id2label.empty() && static_cast<int64_t>(id2label.size()) != num_labels)
    bad_field(where, "id2label",
              "names " + std::to_string(id2label.size()) + " labels but num_labels is " + std::to_string(num_labels));
  if (!problem_type.empty() && problem_type != "regression" && problem_type != "single_label_classification" &&
      problem_type != "multi_label_classification")
    bad_field(where, "problem_type",
              "expected null, \"regression\", \"single_label_classification\" or \"multi_label_classification\", "
              "got \"" +
                  problem_type + "\"");
}

double BertConfig::parameter_count() const {
  const double h = static_cast<double>(hidden_size), inter = static_cast<double>(intermediate_size);
  const double embeddings = static_cast<double>(vocab_size + max_position_embeddings + type_vocab_size) * h + 2 * h;
  const double layer = 4 * (h * h + h) + 2 * h * inter + inter + h + 4 * h;
  const double pooler = h * h + h, classifier = (h + 1) * static_cast<double>(num_labels);
  return embeddings + static_cast<double>(num_hidden_layers) * layer + pooler + classifier;
}

void BertConfig::set_num_labels(int64_t n) {
  HEARTH_CHECK(n > 0, ValueError, "[BertConfig] num_labels must be positive, got ", n);
  if (n != num_labels) id2label.clear();
  num_labels = n;
}

std::string BertConfig::label_name(int64_t id) const {
  HEARTH_CHECK(id >= 0 && id < num_labels, ValueError, "[BertConfig] label id ", id, " is outside [0, ", num_labels,
               ")");
  return id2label.empty() ? default_label(id) : id2label[static_cast<size_t>(id)];
}

BertConfig BertConfig::from_json_file(const std::string& path) {
  io::check_regular_file(path, "[BertConfig]");
  std::ifstream in(path, std::ios::binary);
  HEARTH_CHECK(in.good(), IoError, "[BertConfig] cannot open ", path);
  return from_json_string(io::read_json_text(in, "[BertConfig] " + path, kMaxConfigBytes), path);
}

BertConfig BertConfig::from_json_string(const std::string& text, const std::string& where) {
  io::check_json_limits(text, "[BertConfig] " + where, kMaxConfigBytes);
  json j;
  try {
    j = json::parse(text);
  } catch (const json::exception& e) {
    HEARTH_THROW(ValueError, "[BertConfig] ", where, ": not valid JSON: ", e.what());
  }
  HEARTH_CHECK(j.is_object(), ValueError, "[BertConfig] ", where, ": expected a JSON object, got ", j.type_name());
  if (j.contains("model_type") && !(j["model_type"].is_string() && j["model_type"] == "bert"))
    bad_field(where, "model_type",
              "expected \"bert\", got " + j["model_type"].dump() + " (hearth builds only BERT from this config)");

  // Decoder and cross-attention variants have other weights and masks.
  for (const char* flag : {"is_decoder", "add_cross_attention"})
    if (j.contains(flag) && !(j[flag].is_boolean() && j[flag] == false))
      bad_field(where, flag,
                "expected false (hearth's BERT is an encoder without cross-attention), got " + j[flag].dump());

  BertConfig c;
  read_int(j, "vocab_size", where, c.vocab_size);
  read_int(j, "hidden_size", where, c.hidden_size);
  read_int(j, "num_hidden_layers", where, c.num_hidden_layers);
  read_int(j, "num_attention_heads", where, c.num_attention_heads);
  read_int(j, "intermediate_size", where, c.intermediate_size);
  read_string(j, "hidden_act", where, c.hidden_act);
  read_double(j, "hidden_dropout_prob", where, c.hidden_dropout_prob);
  read_double(j, "attention_probs_dropout_prob", where, c.attention_probs_dropout_prob);
  read_int(j, "max_position_embeddings", where, c.max_position_embeddings);
  read_int(j, "type_vocab_size", where, c.type_vocab_size);
  read_double(j, "initializer_range", where, c.initializer_range);
  read_double(j, "layer_norm_eps", where, c.layer_norm_eps);
  if (j.contains("pad_token_id")) {
    if (j["pad_token_id"].is_null()) {
      c.pad_token_id.reset();
    } else {
      int64_t pad = 0;
      read_int(j, "pad_token_id", where, pad);
      c.pad_token_id = pad;
    }
  }
  read_string(j, "position_embedding_type", where, c.position_embedding_type);
  if (j.contains("classifier_dropout") && !j["classifier_dropout"].is_null()) {
    double p = 0.0;
    read_double(j, "classifier_dropout", where, p);
    c.classifier_dropout = p;
  }
  if (j.contains("problem_type") && !j["problem_type"].is_null()) read_string(j, "problem_type", where, c.problem_type);

  // Labels: id2label decides, as in Hugging Face; num_labels may only confirm it.
  std::optional<int64_t> num_labels_field;
  if (j.contains("num_labels")) {
    int64_t n = 0;
    read_int(j, "num_labels", where, n);
    num_labels_field = n;
  }
  if (j.contains("id2label")) {
    c.id2label = parse_id2label(j["id2label"], where);
  } else if (j.contains("label2id")) {
    c.id2label = parse_label2id(j["label2id"], where);
  }
  if (!c.id2label.empty()) {
    c.num_labels = static_cast<int64_t>(c.id2label.size());
    if (num_labels_field && *num_labels_field != c.num_labels)
      bad_field(where, "num_labels",
                std::to_string(*num_labels_field) + " disagrees with the " + std::to_string(c.num_labels) +
                    " labels of id2label/label2id");
  } else if (num_labels_field) {
    c.num_labels = *num_labels_field;
  }

  // Unknown fields are written back, re-indented: keep only shallow ones up to a
  // total size, so that a crafted field cannot grow every saved config.json.
  size_t kept_bytes = 0;
  for (const auto& [key, value] : j.items()) {
    if (interpreted_fields().count(key)) continue;
    std::string text = value.dump();
    if (io::json_nesting_depth(text) > kMaxExtraFieldDepth || kept_bytes + key.size() + text.size() > kMaxExtraBytes)
      continue;
    kept_bytes += key.size() + text.size();
    c.extra_fields[key] = std::move(text);
  }
  c.validate(where);
  return c;
}

std::string BertConfig::to_json_string(const std::vector<std::string>& architectures) const {
  json j;
  for (const auto& [key, text] : extra_fields) j[key] = json::parse(text);
  if (!architectures.empty()) j["architectures"] = architectures;
  j["model_type"] = "bert";
  j["vocab_size"] = vocab_size;
  j["hidden_size"] = hidden_size;
  j["num_hidden_layers"] = num_hidden_layers;
  j["num_attention_heads"] = num_attention_heads;
  j["intermediate_size"] = intermediate_size;
  j["hidden_act"] = hidden_act;
  j["hidden_dropout_prob"] = hidden_dropout_prob;
  j["attention_probs_dropout_prob"] = attention_probs_dropout_prob;
  j["max_position_embeddings"] = max_position_embeddings;
  j["type_vocab_size"] = type_vocab_size;
  j["initializer_range"] = initializer_range;
  j["layer_norm_eps"] = layer_norm_eps;
  j["pad_token_id"] = pad_token_id ? json(*pad_token_id) : json(nullptr);
  j["position_embedding_type"] = position_embedding_type;
  j["classifier_dropout"] = classifier_dropout ? json(*classifier_dropout) : json(nullptr);
  j["problem_type"] = problem_type.empty() ? json(nullptr) : json(problem_type);
  json id2label_json = json::object(), label2id_json = json::object();
  for (int64_t id = 0; id < num_labels; ++id) {
    id2label_json[std::to_string(id)] = label_name(id);
    label2id_json[label_name(id)] = id;
  }
  j["id2label"] = id2label_json;
  j["label2id"] = label2id_json;
  return j.dump(2) + "\n";
}

void BertConfig::save(const std::string& path, const std::vector<std::string>& architectures) const {
  validate(path);
  io::write_file_atomic(path, to_json_string(architectures));
}

}  // namespace hearth::nn::models
