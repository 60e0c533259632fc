#include "examples/run_clm/clm_metrics.h"

#include <cmath>
#include <limits>
#include <vector>

#include "hearth/core/errors.h"
#include "hearth/ops/elementwise.h"

namespace run_clm {

std::map<std::string, double> next_token_accuracy(const hearth::Tensor& predictions, const hearth::Tensor& labels) {
  HEARTH_CHECK(predictions.dim() == 2 && labels.dim() == 2 && predictions.size(0) == labels.size(0) &&
                   predictions.size(1) == labels.size(1),
               hearth::ShapeError, "[run_clm] expected predictions and labels of one shape [samples, seq_len], got ",
               predictions.shape_string(), " and ", labels.shape_string());
  const std::vector<double> preds = predictions.to(hearth::DType::float64).contiguous().to_vector<double>();
  const std::vector<int64_t> gold = labels.to(hearth::DType::int64).contiguous().to_vector<int64_t>();
  const int64_t rows = labels.size(0), cols = labels.size(1);
  int64_t correct = 0, counted = 0;
  for (int64_t r = 0; r < rows; ++r) {
    for (int64_t t = 0; t + 1 < cols; ++t) {
      const int64_t label = gold[static_cast<size_t>(r * cols + t + 1)];
      if (label == -100) continue;
      ++counted;
      if (static_cast<int64_t>(preds[static_cast<size_t>(r * cols + t)]) == label) ++correct;
    }
  }
  return {{"accuracy", counted == 0 ? 0.0 : static_cast<double>(correct) / static_cast<double>(counted)}};
}

double perplexity(double eval_loss) {
  const double p = std::exp(eval_loss);
  return std::isfinite(p) ? p : std::numeric_limits<double>::infinity();
}

}  // namespace run_clm
