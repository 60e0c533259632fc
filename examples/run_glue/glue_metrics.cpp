#include "examples/run_glue/glue_metrics.h"

#include "hearth/core/errors.h"
#include "hearth/train/eval_metrics.h"

namespace run_glue {

using hearth::DType;
using hearth::ShapeError;
using hearth::Tensor;
using hearth::ValueError;
using hearth::train::accuracy;
using hearth::train::binary_f1;
using hearth::train::matthews_corrcoef;
using hearth::train::mean_squared_error;
using hearth::train::Metrics;
using hearth::train::pearson;
using hearth::train::spearman;

namespace {

std::vector<int64_t> argmax_rows(const Tensor& logits) {
  HEARTH_CHECK(logits.dim() == 2 && logits.size(1) > 0, ShapeError,
               "[metrics] expected classification logits [N, C], got shape ", logits.shape_string());
  const int64_t n = logits.size(0), c = logits.size(1);
  const std::vector<double> v = logits.to(DType::float64).cpu().contiguous().to_vector<double>();
  std::vector<int64_t> out(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i) {
    int64_t best = 0;
    // The first maximum wins, as numpy's argmax.
    for (int64_t k = 1; k < c; ++k)
      if (v[static_cast<size_t>(i * c + k)] > v[static_cast<size_t>(i * c + best)]) best = k;
    out[static_cast<size_t>(i)] = best;
  }
  return out;
}

std::vector<double> regression_outputs(const Tensor& logits) {
  HEARTH_CHECK(logits.dim() == 1 || (logits.dim() == 2 && logits.size(1) == 1), ShapeError,
               "[metrics] expected regression outputs [N] or [N, 1], got shape ", logits.shape_string());
  return logits.to(DType::float64).cpu().contiguous().to_vector<double>();
}

}  // namespace

Metrics glue_metrics(const std::string& task, bool is_regression, const Tensor& logits, const Tensor& labels) {
  HEARTH_CHECK(labels.dim() == 1 && labels.size(0) == logits.size(0), ShapeError, "[metrics] expected labels [",
               logits.size(0), "] for logits of shape ", logits.shape_string(), ", got shape ", labels.shape_string());
  Metrics m;
  if (is_regression) {
    const std::vector<double> predictions = regression_outputs(logits);
    const std::vector<double> truth = labels.to(DType::float64).cpu().contiguous().to_vector<double>();
    if (task == "stsb") {
      m["pearson"] = pearson(predictions, truth);
      m["spearmanr"] = spearman(predictions, truth);
    } else {
      HEARTH_CHECK(task.empty(), ValueError, "[metrics] the GLUE task '", task, "' is not a regression");
      m["mse"] = mean_squared_error(predictions, truth);
    }
  } else {
    HEARTH_CHECK(task != "stsb", ValueError, "[metrics] stsb is a regression; its logits must have one output");
    const std::vector<int64_t> predictions = argmax_rows(logits);
    const std::vector<int64_t> truth = labels.to(DType::int64).cpu().contiguous().to_vector<int64_t>();
    if (task == "cola") {
      m["matthews_correlation"] = matthews_corrcoef(predictions, truth);
    } else {
      m["accuracy"] = accuracy(predictions, truth);
      if (task == "mrpc" || task == "qqp") m["f1"] = binary_f1(predictions, truth);
    }
  }
  if (m.size() > 1) {
    double sum = 0;
    for (const auto& [k, v] : m) sum += v;
    m["combined_score"] = sum / static_cast<double>(m.size());
  }
  return m;
}

std::vector<std::string> glue_metric_names(const std::string& task, bool is_regression) {
  std::vector<std::string> names;
  if (is_regression) {
    names = task == "stsb" ? std::vector<std::string>{"pearson", "spearmanr"} : std::vector<std::string>{"mse"};
  } else if (task == "cola") {
    names = {"matthews_correlation"};
  } else {
    names = {"accuracy"};
    if (task == "mrpc" || task == "qqp") names.push_back("f1");
  }
  if (names.size() > 1) names.push_back("combined_score");
  return names;
}

}  // namespace run_glue
