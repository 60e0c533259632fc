// BertConfig: the hyper-parameters of a BERT model, with Hugging Face's field
// names, read from and written to a model folder's config.json.
//
//   BertConfig c = BertConfig::from_json_file("bert-base-uncased/config.json");
//   c.set_num_labels(3);
//   c.save("out/config.json");
//
// The defaults are bert-base-uncased's. Reading is strict about the fields it
// knows (each must have the right type and a sensible value; errors name the
// file and the field) and keeps the ones it does not (tokenizer hints,
// transformers_version, ...) so that a saved config.json still carries them.
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace hearth::nn::models {

struct BertConfig {
  int64_t vocab_size = 30522;
  int64_t hidden_size = 768;
  int64_t num_hidden_layers = 12;
  int64_t num_attention_heads = 12;
  int64_t intermediate_size = 3072;
  // "gelu" (exact, erf), "gelu_new" or "gelu_pytorch_tanh" (tanh approximation), "relu".
  std::string hidden_act = "gelu";
  double hidden_dropout_prob = 0.1;
  double attention_probs_dropout_prob = 0.1;
  int64_t max_position_embeddings = 512;
  int64_t type_vocab_size = 2;
  double initializer_range = 0.02;
  double layer_norm_eps = 1e-12;
  // The word-embedding row that padding tokens use (kept at zero, no gradient);
  // null in config.json means none.
  std::optional<int64_t> pad_token_id = 0;
  // Only "absolute" position embeddings exist in hearth.
  std::string position_embedding_type = "absolute";
  // Dropout before the classifier; unset means hidden_dropout_prob.
  std::optional<double> classifier_dropout;

  // ---- the classification head ----
  int64_t num_labels = 2;
  // Label names by id; empty means "LABEL_0", "LABEL_1", ... (Hugging Face's
  // default). When set, its size is num_labels.
  std::vector<std::string> id2label;
  // "" (decided per batch: num_labels == 1 is regression, integer labels are
  // single-label classification, floating labels multi-label), "regression",
  // "single_label_classification" or "multi_label_classification".
  std::string problem_type;

  // The fields of config.json hearth does not interpret, as JSON text by name,
  // written back unchanged by to_json_string() (within the bounds below).
  std::map<std::string, std::string> extra_fields;

  // Throws ValueError "[BertConfig] <where>: field \"<name>\": ..." for the
  // first bad field (sizes not positive, hidden_size not a multiple of
  // num_attention_heads, probabilities outside [0, 1), unknown activation, ...).
  void validate(const std::string& where = "config") const;
  // Bounds validate() puts on sizes: each size at most kMaxSize (2^31 - 1),
  // the layer count at most kMaxLayers, the label count at most kMaxLabels.
  // Every label is written back twice (id2label and label2id), so the label
  // bound is what keeps a one-line config from expanding into a saved
  // config.json of hundreds of megabytes and minutes of work.
  static constexpr int64_t kMaxSize = (int64_t{1} << 31) - 1;
  static constexpr int64_t kMaxLayers = 4096;
  static constexpr int64_t kMaxLabels = int64_t{1} << 16;
  // A config.json larger than this is refused. Unknown fields are kept (and
  // written back) only while nested at most kMaxExtraFieldDepth deep and
  // kMaxExtraBytes in all (compact JSON); the rest are dropped.
  static constexpr size_t kMaxConfigBytes = size_t{16} << 20;
  static constexpr int kMaxExtraFieldDepth = 8;
  static constexpr size_t kMaxExtraBytes = size_t{64} << 10;
  // Parameters of BertForSequenceClassification built from this config (as a
  // double: the count of a hostile config need not fit in an integer).
  double parameter_count() const;

  // Sets num_labels; label names are reset to the defaults when the count changes.
  void set_num_labels(int64_t n);
  // The name of label `id` ("LABEL_<id>" unless id2label names it).
  std::string label_name(int64_t id) const;
  // Hidden size of one attention head.
  int64_t head_size() const { return hidden_size / num_attention_heads; }
  // The dropout probability in front of the classifier.
  double classifier_dropout_prob() const { return classifier_dropout.value_or(hidden_dropout_prob); }

  // Parses Hugging Face's config.json. Labels come from id2label (keys "0",
  // "1", ...), else label2id, else num_labels; disagreeing ones are an error.
  // IoError when the file cannot be read, ValueError naming the file and field
  // when it is not a BERT config hearth can build.
  static BertConfig from_json_file(const std::string& path);
  // `where` names the source in error messages.
  static BertConfig from_json_string(const std::string& text, const std::string& where = "config");

  // config.json text: the known fields, id2label/label2id, model_type "bert",
  // `architectures` when given, and the extra fields. Keys sorted, as
  // Hugging Face writes them.
  std::string to_json_string(const std::vector<std::string>& architectures = {}) const;
  // Writes to_json_string() to `path` atomically.
  void save(const std::string& path, const std::vector<std::string>& architectures = {}) const;
};

}  // namespace hearth::nn::models
