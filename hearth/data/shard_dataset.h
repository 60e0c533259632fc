// One rank's share of a dataset for evaluation: samples rank, rank + n,
// rank + 2n, ... of the base. Unlike the training sampler nothing is padded,
// so summing per-rank counts covers every sample exactly once.
#pragma once

#include <memory>

#include "hearth/data/dataset.h"
#include "hearth/data/planned_images.h"

namespace hearth::data {

// Planned images (hearth/data/planned_images.h) pass through when the base
// plans them, so each rank's evaluation can finish its images on its device.
class ShardDataset : public Dataset, public PlannedImageDataset {
 public:
  ShardDataset(std::shared_ptr<const Dataset> base, int64_t num_shards, int64_t shard);
  int64_t size() const override;
  Example get(int64_t index) const override;
  Example get_for_epoch(int64_t index, int64_t epoch) const override;

  bool plans_images() const override { return planned_base_ != nullptr; }
  PlannedSample get_planned(int64_t index, int64_t epoch) const override;
  Example make_on_host(const PlannedSample& sample) const override;

 private:
  int64_t base_index(int64_t index) const;

  std::shared_ptr<const Dataset> base_;
  const PlannedImageDataset* planned_base_ = nullptr;  // base_, when it plans its images
  int64_t num_shards_, shard_;
};

}  // namespace hearth::data
