#include "hearth/data/shard_dataset.h"

#include "hearth/core/errors.h"

namespace hearth::data {

ShardDataset::ShardDataset(std::shared_ptr<const Dataset> base, int64_t num_shards, int64_t shard)
    : base_(std::move(base)), num_shards_(num_shards), shard_(shard) {
  HEARTH_CHECK(base_ != nullptr, ValueError, "[shard] the base dataset is null");
  HEARTH_CHECK(num_shards_ >= 1 && shard_ >= 0 && shard_ < num_shards_, ValueError, "[shard] shard ", shard_,
               " is outside [0, ", num_shards_, ")");
  planned_base_ = as_planned_image_dataset(*base_);
}

int64_t ShardDataset::size() const {
  const int64_t n = base_->size();
  return n > shard_ ? (n - shard_ + num_shards_ - 1) / num_shards_ : 0;
}

int64_t ShardDataset::base_index(int64_t index) const {
  HEARTH_CHECK(index >= 0 && index < size(), ValueError, "[shard] index ", index, " is outside [0, ", size(), ")");
  return shard_ + index * num_shards_;
}

Example ShardDataset::get(int64_t index) const { return base_->get(base_index(index)); }

Example ShardDataset::get_for_epoch(int64_t index, int64_t epoch) const {
  return base_->get_for_epoch(base_index(index), epoch);
}

PlannedSample ShardDataset::get_planned(int64_t index, int64_t epoch) const {
  HEARTH_CHECK(planned_base_ != nullptr, ValueError, "[shard] get_planned: the base data set does not plan its images");
  return planned_base_->get_planned(base_index(index), epoch);
}

// The sample already names its base index.
Example ShardDataset::make_on_host(const PlannedSample& sample) const {
  HEARTH_CHECK(planned_base_ != nullptr, ValueError, "[shard] make_on_host: the base data set does not plan its images");
  return planned_base_->make_on_host(sample);
}

}  // namespace hearth::data
