// Hugging Face's GLUE metric per task, as run_glue reports it:
//
//   cola            matthews_correlation
//   stsb            pearson, spearmanr
//   mrpc, qqp       accuracy, f1
//   the others      accuracy
//   no task         mse for a regression, else accuracy
//
// plus combined_score, the mean of the others, when there is more than one.
// Predictions are the argmax of the logits, or for a regression the one
// output itself.
#pragma once

#include <string>
#include <vector>

#include "hearth/core/tensor.h"
#include "hearth/train/callbacks.h"

namespace run_glue {

// `task` is a GLUE task name ("mnli_mismatched" and "mnli_matched" too), or
// empty for other data. logits [N, C] (or [N, 1] / [N] for a regression) and
// labels [N], on any device.
hearth::train::Metrics glue_metrics(const std::string& task, bool is_regression, const hearth::Tensor& logits,
                                    const hearth::Tensor& labels);

// The names glue_metrics reports for `task` (without "eval_"), known before
// any evaluation.
std::vector<std::string> glue_metric_names(const std::string& task, bool is_regression);

}  // namespace run_glue
