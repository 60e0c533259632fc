// Evaluation metrics over whole prediction lists, defined as scikit-learn and
// SciPy define them (the definitions Hugging Face's GLUE metric uses):
//
//   accuracy            fraction of predictions equal to their label
//   binary_f1           F1 of class 1 (sklearn f1_score, average="binary"); 0 without positives
//   matthews_corrcoef   sklearn's multi-class MCC from the confusion matrix; 0 when undefined
//   pearson             SciPy pearsonr's r; NaN when either list is constant
//   spearman            Pearson's r of the average ranks (ties share their mean rank)
//
// The lists must be equally long and not empty (ValueError otherwise).
#pragma once

#include <cstdint>
#include <vector>

namespace hearth::train {

double accuracy(const std::vector<int64_t>& predictions, const std::vector<int64_t>& labels);
double binary_f1(const std::vector<int64_t>& predictions, const std::vector<int64_t>& labels);
double matthews_corrcoef(const std::vector<int64_t>& predictions, const std::vector<int64_t>& labels);
double mean_squared_error(const std::vector<double>& predictions, const std::vector<double>& labels);
double pearson(const std::vector<double>& x, const std::vector<double>& y);
double spearman(const std::vector<double>& x, const std::vector<double>& y);

// 1-based ranks, tied values sharing the mean of their ranks ([10, 20, 10] -> [1.5, 3, 1.5]).
std::vector<double> average_ranks(const std::vector<double>& values);

}  // namespace hearth::train
