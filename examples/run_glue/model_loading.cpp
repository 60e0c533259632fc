#include "examples/run_glue/model_loading.h"

#include <filesystem>
#include <iostream>

#include "hearth/core/errors.h"
#include "hearth/nn/init.h"
#include "hearth/nn/models/bert_layers.h"

namespace run_glue {

namespace fs = std::filesystem;
using hearth::nn::models::BertConfig;
using hearth::nn::models::BertForSequenceClassification;
using hearth::nn::models::BertLoadOptions;

void require_local_model_folder(const std::string& path) {
  if (fs::is_directory(path)) return;
  HEARTH_THROW(hearth::IoError, "[run_glue] --model_name_or_path \"", path,
               "\" is not a local folder, and hearth has no network: download elsewhere and pass the folder. On a "
               "machine with internet access run\n  huggingface-cli download ",
               path, " --local-dir ", fs::path(path).filename().string(),
               "\ncopy that folder (config.json, model.safetensors, vocab.txt) here and pass "
               "--model_name_or_path <folder>.");
}

std::shared_ptr<BertForSequenceClassification> load_classifier(const std::string& path,
                                                               const hearth::data::LabelSpace& labels,
                                                               bool ignore_mismatched_sizes, std::ostream* notices) {
  require_local_model_folder(path);
  BertLoadOptions options;
  options.num_labels = labels.num_labels();
  options.problem_type = labels.is_regression ? "regression" : "single_label_classification";
  std::shared_ptr<BertForSequenceClassification> model;
  try {
    model = BertForSequenceClassification::from_pretrained(path, options);
  } catch (const hearth::ShapeError& e) {
    const int64_t saved = BertConfig::from_json_file((fs::path(path) / "config.json").string()).num_labels;
    if (!ignore_mismatched_sizes)
      HEARTH_THROW(hearth::ShapeError, "[run_glue] the classifier in ", path, " has ", saved,
                   " outputs but the data have ", labels.num_labels(),
                   " labels; pass --ignore_mismatched_sizes to train a new classifier on the pre-trained encoder (",
                   e.what(), ")");
    // The checkpoint as it is, then everything but its classifier moved into
    // a model with the right head.
    BertLoadOptions as_saved;
    as_saved.log = nullptr;
    auto loaded = BertForSequenceClassification::from_pretrained(path, as_saved);
    BertConfig config = loaded->config;
    config.set_num_labels(labels.num_labels());
    config.problem_type = *options.problem_type;
    {
      // The encoder's draws would be overwritten at once: skip them.
      hearth::nn::init::SkipInitGuard loaded_next;
      model = std::make_shared<BertForSequenceClassification>(config);
    }
    hearth::nn::StateDict weights = loaded->state_dict();
    std::erase_if(weights, [](const auto& kv) { return kv.first.starts_with("classifier."); });
    model->load_state_dict(weights, /*strict=*/false);
    hearth::nn::models::init_bert_weights(*model->classifier, config.initializer_range);
    if (notices != nullptr)
      *notices << "[run_glue] " << path << ": the classifier has " << saved << " outputs, the data "
               << labels.num_labels()
               << " labels: classifier.weight and classifier.bias are newly initialised (--ignore_mismatched_sizes)\n";
  }
  if (!labels.is_regression) model->config.id2label = labels.label_list;
  return model;
}

std::shared_ptr<BertForSequenceClassification> classifier_from_config(const std::string& config_name,
                                                                      const hearth::data::LabelSpace& labels) {
  // As Hugging Face's AutoConfig.from_pretrained: a model folder stands for its config.json.
  const std::string config_path =
      fs::is_directory(config_name) ? (fs::path(config_name) / "config.json").string() : config_name;
  HEARTH_CHECK(fs::is_regular_file(config_path), hearth::IoError, "[run_glue] --config_name \"", config_name,
               "\": expected a BERT config.json file, or a model folder holding one");
  BertConfig config;
  try {
    config = BertConfig::from_json_file(config_path);
  } catch (const hearth::Error& e) {
    HEARTH_THROW(hearth::ValueError, "[run_glue] --config_name ", config_path, ": ", e.what());
  }
  config.set_num_labels(labels.num_labels());
  config.problem_type = labels.is_regression ? "regression" : "single_label_classification";
  auto model = std::make_shared<BertForSequenceClassification>(config);
  if (!labels.is_regression) model->config.id2label = labels.label_list;
  return model;
}

}  // namespace run_glue
