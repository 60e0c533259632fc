// metric_for_best_model checked before training against the metrics the
// program's evaluation reports, so that a misspelled name is a bad argument
// at the start rather than an error at the first evaluation, after the
// first epoch's work.
#pragma once

#include <string>
#include <vector>

#include "hearth/train/training_arguments.h"

namespace hearth::cli {

// The metrics every evaluation of the Trainer reports besides the program's:
// loss, runtime, samples_per_second, steps_per_second.
std::vector<std::string> trainer_metric_names();

// ValueError "[trainer] metric_for_best_model 'acuracy': evaluation reports
// only loss, accuracy, ... (did you mean 'accuracy'?)" when args names a
// metric (with or without "eval_") that is neither in `reported` (without
// the "eval_" prefix) nor among trainer_metric_names(); nothing when unset.
void check_metric_for_best_model(const train::TrainingArguments& args, const std::vector<std::string>& reported);

}  // namespace hearth::cli
