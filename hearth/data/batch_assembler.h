// default_collate one sample at a time: each sample is copied into its slot
// of the batch as soon as it is built, and can then be dropped.
//
// Collating at the end keeps every sample of a batch alive until the last is
// built (128 images of 602 KB), so each image's intermediate tensors land in
// memory the C library has just taken from the kernel, and fault in page by
// page. Copied in as they come, a worker's samples reuse the same few
// megabytes. The batch is the one default_collate builds, with its checks and
// messages (fields, shapes and dtypes must match sample 0's).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "hearth/data/collate.h"
#include "hearth/data/dataset.h"

namespace hearth::data {

class BatchAssembler {
 public:
  // A batch of `count` samples, each field stacked into a tensor from `make_output`.
  BatchAssembler(int64_t count, BatchTensorFactory make_output);

  // Copies sample number added() into the batch.
  void add(const Example& sample);
  int64_t added() const { return added_; }
  // The batch, once all `count` samples were added.
  Batch finish();

 private:
  struct Column {
    std::string name;
    Shape shape;
    DType dtype;
    Tensor out;
    char* next = nullptr;  // where the next sample's bytes go
  };
  int64_t count_;
  int64_t added_ = 0;
  BatchTensorFactory make_output_;
  std::vector<Column> columns_;
};

}  // namespace hearth::data
