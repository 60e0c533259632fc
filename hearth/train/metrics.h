// Classification metrics of an evaluation, accumulated batch by batch on the
// model's device: the counts stay there until compute(), which reads the host
// once, so evaluating on an accelerator never waits on each batch.
#pragma once

#include <cstdint>
#include <functional>
#include <string>

#include "hearth/core/tensor.h"
#include "hearth/train/callbacks.h"

namespace hearth::train {

class ClassificationMetrics {
 public:
  // logits [N, C] (floating), labels [N] int64 class indices, on one device.
  // The mean cross-entropy, accuracy and, when C == 2, the F1 score of class 1
  // are accumulated. All batches must have the same C.
  void update(const Tensor& logits, const Tensor& labels);
  int64_t num_samples() const { return num_samples_; }
  // Data parallelism: each rank evaluated its share; `all_reduce_sum` sums a
  // float64 tensor on `device` in place over the ranks. Afterwards every
  // rank's compute() gives the metrics of the whole evaluation set. Each rank
  // must have seen at least one sample (it sets the number of classes).
  void sum_across_ranks(const std::function<void(const Tensor&)>& all_reduce_sum, Device device);
  // {"<prefix>loss", "<prefix>accuracy"} and "<prefix>f1" for binary tasks;
  // empty when no sample was seen.
  Metrics compute(const std::string& prefix = "eval_") const;

 private:
  Tensor loss_sum_;  // float64
  Tensor correct_;   // int64
  Tensor true_pos_, false_pos_, false_neg_;
  int64_t num_samples_ = 0;
  int64_t num_classes_ = 0;
};

// 2 tp / (2 tp + fp + fn); 0 when there are no positives at all.
double f1_score(int64_t true_pos, int64_t false_pos, int64_t false_neg);

}  // namespace hearth::train
