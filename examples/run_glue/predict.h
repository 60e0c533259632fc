// --do_predict: the fine-tuned model's predictions on unlabelled data, written
// as run_glue.py writes them to output_dir/predict_results_<task>.txt:
//
//   index	prediction
//   0	equivalent
//   1	not_equivalent
//
// (the label's name; for a regression the value with three decimals).
#pragma once

#include <memory>
#include <string>

#include "hearth/data/collate.h"
#include "hearth/data/glue.h"
#include "hearth/data/tokenized_text_dataset.h"
#include "hearth/nn/models/bert.h"

namespace run_glue {

// Runs `model` (on `device`, in eval mode, no gradients) over `dataset` in
// batches of `batch_size` and writes the results file to `path`.
void write_predictions(hearth::nn::models::BertForSequenceClassification& model, hearth::Device device,
                       const hearth::data::TokenizedTextDataset& dataset, const hearth::data::CollateFn& collate,
                       int64_t batch_size, const hearth::data::LabelSpace& labels, const std::string& path);

}  // namespace run_glue
