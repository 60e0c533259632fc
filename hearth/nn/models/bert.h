// BERT (Devlin et al. 2018) as Hugging Face's transformers builds it:
// BertModel (the encoder and pooler) and BertForSequenceClassification (a
// linear head on the pooled [CLS] vector). Parameter names, shapes,
// initialisation, attention masking and losses are Hugging Face's, so a model
// folder written by their save_pretrained loads here and the other way round.
//
//   auto model = BertForSequenceClassification::from_pretrained("bert-base-uncased", {.num_labels = 3});
//   Tensor logits = model->forward(input_ids, token_type_ids, attention_mask);       // [B, 3]
//   auto out = model->forward(input_ids, token_type_ids, attention_mask, labels);    // out.loss, out.logits
//   out.loss.backward();
//   model->save_pretrained("runs/mnli/final");
//
// Inputs: input_ids [B, S] int64 (int32 accepted); token_type_ids [B, S]
// (undefined: all segment 0); attention_mask [B, S] of 1 for tokens and 0 for
// padding, any dtype (undefined: every token attends). S may not exceed
// config.max_position_embeddings.
//
// Model folders: config.json (BertConfig) and model.safetensors, or shards
// listed by model.safetensors.index.json. hearth never downloads: fetch the
// folder on a connected machine (huggingface-cli download <name> --local-dir
// <folder>) and pass its path.
#pragma once

#include <iostream>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "hearth/nn/dropout.h"
#include "hearth/nn/linear.h"
#include "hearth/nn/models/bert_config.h"
#include "hearth/nn/models/bert_layers.h"
#include "hearth/nn/module.h"

namespace hearth::nn::models {

struct BertModelOutput {
  Tensor last_hidden_state;  // [B, S, H]
  Tensor pooler_output;      // [B, H]; undefined without a pooling layer
};

struct SequenceClassifierOutput {
  Tensor loss;    // 0-d; undefined when no labels were given
  Tensor logits;  // [B, num_labels]
};

// How from_pretrained adapts the folder's config.json.
struct BertLoadOptions {
  // Overrides the folder's label count (fine-tuning a base checkpoint on a
  // task with this many classes; 1 = regression). Label names reset when it
  // changes the count.
  std::optional<int64_t> num_labels = std::nullopt;
  // Overrides config.problem_type ("regression", "single_label_classification",
  // "multi_label_classification").
  std::optional<std::string> problem_type = std::nullopt;
  // Warnings (head weights ignored, head newly initialised); nullptr silences them.
  std::ostream* log = &std::cerr;
};

class BertModel : public Module {
 public:
  // A freshly initialised model (Hugging Face's init_weights, from the global
  // generator). Throws ValueError when the config does not validate.
  explicit BertModel(BertConfig config, bool add_pooling_layer = true);

  using Module::forward;  // the single-tensor forward raises NotImplementedError
  // Any of token_type_ids and attention_mask may be undefined (see above).
  BertModelOutput forward(const Tensor& input_ids, const Tensor& token_type_ids, const Tensor& attention_mask);

  // Loads a model folder. The checkpoint may be a BertModel's (names without
  // a prefix) or a task model's (names under "bert."); head weights
  // ("classifier.*", pre-training heads "cls.*") are ignored with a warning.
  // Every encoder weight must be present with its shape: anything missing,
  // misshapen or unknown is an error naming the file and the keys.
  static std::shared_ptr<BertModel> from_pretrained(const std::string& model_dir, const BertLoadOptions& options = {});
  // Writes config.json (architectures ["BertModel"]) and model.safetensors
  // into `dir` (created if needed), each file atomically; other files there
  // (the tokenizer's vocab.txt) are left alone.
  void save_pretrained(const std::string& dir) const;

  BertConfig config;
  std::shared_ptr<BertEmbeddings> embeddings;
  std::shared_ptr<BertEncoder> encoder;
  std::shared_ptr<BertPooler> pooler;  // null without a pooling layer
};

class BertForSequenceClassification : public Module {
 public:
  // A freshly initialised model with config.num_labels outputs.
  explicit BertForSequenceClassification(BertConfig config);

  // input_ids alone: no padding, every token in segment 0.
  Tensor forward(const Tensor& input_ids) override;
  // Logits [B, num_labels]; token_type_ids and attention_mask may be undefined.
  Tensor forward(const Tensor& input_ids, const Tensor& token_type_ids, const Tensor& attention_mask);
  // Logits and, when labels are defined, the loss of compute_loss.
  SequenceClassifierOutput forward(const Tensor& input_ids, const Tensor& token_type_ids, const Tensor& attention_mask,
                                   const Tensor& labels);

  // Hugging Face's loss for this head, by problem_type(labels):
  //   regression:                 mean squared error; labels [B] (num_labels 1) or [B, num_labels]
  //   single_label_classification: mean cross entropy; labels [B] of class ids (int64/int32)
  //   multi_label_classification:  mean binary cross entropy with logits; labels [B, num_labels] of 0/1
  Tensor compute_loss(const Tensor& logits, const Tensor& labels) const;
  // config.problem_type if set; else regression for one label, single-label
  // classification for integer labels, multi-label for floating ones.
  std::string problem_type(const Tensor& labels) const;

  // Loads a model folder (see BertModel::from_pretrained for the encoder).
  // A checkpoint without the classifier (a base model, or a pre-training
  // checkpoint) gets a freshly initialised classifier and a warning, as in
  // Hugging Face; a classifier whose shape disagrees with num_labels is an
  // error (pass options.num_labels to match the checkpoint, or train a fresh
  // head from the base model).
  static std::shared_ptr<BertForSequenceClassification> from_pretrained(const std::string& model_dir,
                                                                        const BertLoadOptions& options = {});
  // config.json (architectures ["BertForSequenceClassification"]) and
  // model.safetensors, as BertModel::save_pretrained.
  void save_pretrained(const std::string& dir) const;

  BertConfig config;
  std::shared_ptr<BertModel> bert;
  std::shared_ptr<Dropout> dropout;
  std::shared_ptr<Linear> classifier;
};

}  // namespace hearth::nn::models
