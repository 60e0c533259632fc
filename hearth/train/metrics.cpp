#include "hearth/train/metrics.h"

#include <vector>

#include "hearth/core/errors.h"
#include "hearth/ops/elementwise.h"
#include "hearth/ops/factory.h"
#include "hearth/ops/indexing.h"
#include "hearth/ops/nn_functional.h"
#include "hearth/ops/reduction.h"

namespace hearth::train {
namespace {

// Adds `value` into the accumulator, creating it on first use.
void accumulate(Tensor& acc, const Tensor& value) {
  if (!acc.defined()) {
    acc = value.clone();
  } else {
    add_(acc, value);
  }
}

}  // namespace

double f1_score(int64_t true_pos, int64_t false_pos, int64_t false_neg) {
  int64_t denom = 2 * true_pos + false_pos + false_neg;
  return denom == 0 ? 0.0 : 2.0 * static_cast<double>(true_pos) / static_cast<double>(denom);
}

void ClassificationMetrics::update(const Tensor& logits, const Tensor& labels) {
  HEARTH_CHECK(logits.defined() && logits.dim() == 2 && logits.is_floating_point(), ShapeError,
               "[metrics] expected floating logits [N, C], got ",
               logits.defined() ? "shape " + logits.shape_string() : std::string("an undefined tensor"));
  HEARTH_CHECK(
      labels.defined() && labels.dim() == 1 && labels.size(0) == logits.size(0) && labels.dtype() == DType::int64,
      ShapeError, "[metrics] expected int64 labels [", logits.size(0), "], got ",
      labels.defined() ? dtype_name(labels.dtype()) + std::string(" ") + labels.shape_string()
                       : std::string("an undefined tensor"));
  HEARTH_CHECK(num_classes_ == 0 || num_classes_ == logits.size(1), ShapeError, "[metrics] expected ", num_classes_,
               " classes as in the earlier batches, got logits ", logits.shape_string());
  num_classes_ = logits.size(1);
  if (logits.size(0) == 0) return;
  num_samples_ += logits.size(0);
  // In float32 at least, as autocast runs the loss: half-precision logits
  // summed in their own dtype would round the batch's loss to ~3 digits.
  const Tensor wide = logits.dtype() == DType::float64 ? logits : cast(logits, DType::float32);
  accumulate(loss_sum_, cast(cross_entropy(wide, labels, Tensor(), -100, "sum"), DType::float64));
  Tensor pred = argmax(logits, 1);
  accumulate(correct_, sum(cast(eq(pred, labels), DType::int64)));
  if (num_classes_ == 2) {
    Tensor pred_pos = eq(pred, Scalar(int64_t{1}));
    Tensor true_pos = eq(labels, Scalar(int64_t{1}));
    accumulate(true_pos_, sum(cast(logical_and(pred_pos, true_pos), DType::int64)));
    accumulate(false_pos_, sum(cast(logical_and(pred_pos, logical_not(true_pos)), DType::int64)));
    accumulate(false_neg_, sum(cast(logical_and(logical_not(pred_pos), true_pos), DType::int64)));
  }
}

void ClassificationMetrics::sum_across_ranks(const std::function<void(const Tensor&)>& all_reduce_sum, Device device) {
  auto part = [&](const Tensor& t) {
    return t.defined() ? cast(t, DType::float64).reshape({1}) : zeros({1}, DType::float64, device);
  };
  Tensor count = full({1}, static_cast<double>(num_samples_), DType::float64, device);
  Tensor packed = cat({part(loss_sum_), part(correct_), count, part(true_pos_), part(false_pos_), part(false_neg_)});
  all_reduce_sum(packed);
  auto at = [&](int64_t i) { return packed.narrow(0, i, 1).reshape({}); };
  loss_sum_ = at(0);
  correct_ = cast(at(1), DType::int64);
  num_samples_ = static_cast<int64_t>(at(2).item<double>());
  if (num_classes_ == 2) {
    true_pos_ = cast(at(3), DType::int64);
    false_pos_ = cast(at(4), DType::int64);
    false_neg_ = cast(at(5), DType::int64);
  }
}

Metrics ClassificationMetrics::compute(const std::string& prefix) const {
  Metrics m;
  if (num_samples_ == 0) return m;
  std::vector<Tensor> parts = {loss_sum_, cast(correct_, DType::float64)};
  if (num_classes_ == 2) {
    for (const Tensor* t : {&true_pos_, &false_pos_, &false_neg_}) parts.push_back(cast(*t, DType::float64));
  }
  // One transfer for every count.
  std::vector<double> v = stack(parts).cpu().to_vector<double>();
  const double n = static_cast<double>(num_samples_);
  m[prefix + "loss"] = v[0] / n;
  m[prefix + "accuracy"] = v[1] / n;
  if (num_classes_ == 2)
    m[prefix + "f1"] = f1_score(static_cast<int64_t>(v[2]), static_cast<int64_t>(v[3]), static_cast<int64_t>(v[4]));
  return m;
}

}  // namespace hearth::train
