// run_clm's evaluation: the model's predictions are the argmax token ids
// [B, S] (run_clm.py's preprocess_logits_for_metrics), not the [B, S, V]
// logits, and accuracy compares the prediction at t with the label at t + 1
// (compute_metrics); perplexity is exp(eval_loss).
#pragma once

#include <map>
#include <string>

#include "hearth/core/tensor.h"

namespace run_clm {

// Accuracy of next-token predictions: predictions [N, S] (token ids, any
// dtype) against labels [N, S], positions whose label is -100 left out.
std::map<std::string, double> next_token_accuracy(const hearth::Tensor& predictions, const hearth::Tensor& labels);

// exp(loss), infinity where that overflows (run_clm.py's OverflowError).
double perplexity(double eval_loss);

}  // namespace run_clm
