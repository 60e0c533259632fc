// The BERT classifier run_glue fine-tunes, from a local model folder, with
// as many outputs as the task has labels.
#pragma once

#include <memory>
#include <ostream>
#include <string>

#include "hearth/data/glue.h"
#include "hearth/nn/models/bert.h"

namespace run_glue {

// Throws hearth::IoError with the way out (download elsewhere, pass the
// folder) when `path` is not a local folder: hearth has no network access.
void require_local_model_folder(const std::string& path);

// Loads the folder with labels.num_labels() outputs. A checkpoint whose
// classifier has another label count is an error unless
// ignore_mismatched_sizes, which keeps the encoder and trains a new
// classifier (Hugging Face's flag of the same name). The config's label names
// become the task's. The notice of a new classifier goes to `notices`
// (nullptr: nowhere, for the ranks other than 0 of a launch).
std::shared_ptr<hearth::nn::models::BertForSequenceClassification> load_classifier(
    const std::string& path, const hearth::data::LabelSpace& labels, bool ignore_mismatched_sizes,
    std::ostream* notices);

// A randomly initialised classifier of the shape `config_path` (a BERT
// config.json) describes, with labels.num_labels() outputs: Hugging Face's
// from_config. IoError or ValueError naming --config_name when the file is
// missing or not a BERT config.
std::shared_ptr<hearth::nn::models::BertForSequenceClassification> classifier_from_config(
    const std::string& config_path, const hearth::data::LabelSpace& labels);

}  // namespace run_glue
