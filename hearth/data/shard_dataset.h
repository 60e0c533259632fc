// One rank's share of a dataset for evaluation: samples rank, rank + n,
// rank + 2n, ... of the base. Unlike the training sampler nothing is padded,
// so summing per-rank counts covers every sample exactly once.
#pragma once

#include <memory>

#include "hearth/data/dataset.h"

namespace hearth::data {

class ShardDataset : public Dataset {
 public:
  ShardDataset(std::shared_ptr<const Dataset> base, int64_t num_shards, int64_t shard);
  int64_t size() const override;
  Example get(int64_t index) const override;
  Example get_for_epoch(int64_t index, int64_t epoch) const override;

 private:
  int64_t base_index(int64_t index) const;

  std::shared_ptr<const Dataset> base_;
  int64_t num_shards_, shard_;
};

}  // namespace hearth::data
