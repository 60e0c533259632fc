// DataLoader: batches of samples from a Dataset, in an order fixed by
// (seed, epoch), built ahead of time by worker threads.
//
// Determinism: batch k of epoch e holds the same samples, transformed the same
// way, whatever num_workers is; workers build whole batches and hand them over
// in order. The position is (epoch, batches yielded so far), and
// load_state() of a saved position makes the following batches identical to
// the ones an uninterrupted run would have produced.
//
//   DataLoader loader(dataset, {.batch_size = 64, .shuffle = true, .seed = 42, .num_workers = 2});
//   for (int64_t epoch = 0; epoch < epochs; ++epoch) {
//     loader.set_epoch(epoch);
//     for (Batch& batch : loader) step(batch);
//   }
//
// With the default collate, each sample is copied into its batch as soon as
// it is built (hearth/data/batch_assembler.h), and batches are stacked
// straight into their final memory: page-locked memory with pin_memory, else
// blocks reused from batch to batch (hearth/data/batch_buffers.h), so no
// worker waits on the kernel mapping fresh pages and the consuming thread
// does no per-batch unmapping.
//
// Batches of images bound for an accelerator (options.device) can be
// finished there: with a data set that plans its images, such as
// TransformDataset over an ImageFolder, and the device's image decoder
// chosen (HEARTH_IMAGE_DECODER, hearth/data/image_decoder_choice.h), workers
// only read the files and draw each sample's crop and flip, and the device
// decodes, crops, resizes and normalises each batch into its own memory
// (hearth/data/device_image_batches.h). pixel_values then arrive on the
// device, in image_dtype and image_memory_format; the other fields as above.
//
// Iterating (begin()) continues from the current position; if the current
// epoch is finished it first moves on to the next epoch, so a loop that never
// calls set_epoch still reshuffles every pass.
#pragma once

#include <cstdint>
#include <iterator>
#include <memory>
#include <optional>
#include <vector>

#include "hearth/core/device.h"
#include "hearth/core/dtype.h"
#include "hearth/core/memory_format.h"
#include "hearth/data/batch_buffers.h"
#include "hearth/data/collate.h"
#include "hearth/data/dataset.h"
#include "hearth/data/sampler.h"

namespace hearth::data {

class DeviceImageBatches;  // hearth/data/device_image_batches.h

// The most loader threads allowed: 4 per CPU core. More only contend, and
// thousands exhaust what the system lets a process start.
int64_t max_num_workers();

struct DataLoaderOptions {
  int64_t batch_size = 1;
  bool shuffle = false;
  uint64_t seed = 0;
  // Drop the last, smaller batch of an epoch.
  bool drop_last = false;
  // 0 builds batches on the calling thread.
  int64_t num_workers = 0;
  // Batches each worker may build ahead of the consumer.
  int64_t prefetch_factor = 2;
  // Collated batches go to page-locked memory (Tensor::pin_memory), so their
  // copies to an accelerator return at once and overlap with compute. The
  // default collate stacks into that memory directly, without a second copy.
  bool pin_memory = false;
  // Data parallelism (DistributedSampler): this process reads rank's share of
  // each epoch, padded so every rank gets the same number of samples.
  int64_t num_replicas = 1;
  int64_t rank = 0;
  CollateFn collate = default_collate;
  // Where the batches are used (the Trainer's device). With an accelerator,
  // image batches may be finished there (see above), pixel_values in
  // image_dtype (float32 or bfloat16) and image_memory_format; batches built
  // on the host keep float32, contiguous, as the transforms make them.
  Device device{};
  DType image_dtype = DType::float32;
  MemoryFormat image_memory_format = MemoryFormat::contiguous;
};

// Where a loader stands: enough to resume it exactly.
struct DataLoaderState {
  int64_t epoch = 0;
  int64_t batches_yielded = 0;  // in that epoch
  friend bool operator==(const DataLoaderState&, const DataLoaderState&) = default;
};

class DataLoader {
 public:
  DataLoader(std::shared_ptr<const Dataset> dataset, DataLoaderOptions options);
  ~DataLoader();
  DataLoader(const DataLoader&) = delete;
  DataLoader& operator=(const DataLoader&) = delete;

  // Batches per epoch for this rank (len(loader)).
  int64_t num_batches() const;
  // Samples per epoch for this rank, padding included.
  int64_t num_samples() const;
  const DataLoaderOptions& options() const { return options_; }
  const Dataset& dataset() const { return *dataset_; }
  // The reused memory batches are stacked into (default collate, no pin_memory).
  const BatchBufferPool& batch_buffers() const { return *batch_buffers_; }
  // Whether image batches are finished on options().device (see above).
  bool finishes_images_on_device() const { return device_images_ != nullptr; }

  // Moves to the start of `epoch`.
  void set_epoch(int64_t epoch);
  int64_t epoch() const { return epoch_; }

  // The next batch of the current epoch, or nullopt once it is exhausted
  // (it stays exhausted until set_epoch or a new iteration). If building the
  // batch throws, the exception reaches the caller and the position does not
  // move, so the same batch is tried again on the next call.
  std::optional<Batch> next();

  DataLoaderState state() const { return {epoch_, position_}; }
  void load_state(const DataLoaderState& state);

  // The dataset indices of this rank's samples in `epoch`, in order.
  std::vector<int64_t> epoch_indices(int64_t epoch) const;

  class Iterator {
   public:
    using iterator_category = std::input_iterator_tag;
    using value_type = Batch;
    using difference_type = std::ptrdiff_t;
    using pointer = Batch*;
    using reference = Batch&;

    Iterator() = default;
    Batch& operator*() { return *current_; }
    Batch* operator->() { return &*current_; }
    Iterator& operator++();
    void operator++(int) { ++*this; }
    friend bool operator==(const Iterator& it, std::default_sentinel_t) { return !it.current_.has_value(); }

   private:
    friend class DataLoader;
    explicit Iterator(DataLoader* loader);
    DataLoader* loader_ = nullptr;
    std::optional<Batch> current_;
  };
  Iterator begin();
  std::default_sentinel_t end() { return {}; }

 private:
  class Prefetcher;

  // The samples of batch `batch` in the current epoch's order.
  Batch build_batch(const std::vector<int64_t>& order, int64_t epoch, int64_t batch) const;
  std::shared_ptr<const std::vector<int64_t>> current_order();
  void stop_prefetch();

  std::shared_ptr<const Dataset> dataset_;
  DataLoaderOptions options_;
  int64_t epoch_ = 0;
  int64_t position_ = 0;
  // The current epoch's sample order, computed once per epoch.
  std::shared_ptr<const std::vector<int64_t>> order_;
  int64_t order_epoch_ = 0;
  std::unique_ptr<Prefetcher> prefetcher_;
  bool default_collate_ = false;
  std::shared_ptr<BatchBufferPool> batch_buffers_;
  std::unique_ptr<DeviceImageBatches> device_images_;
};

}  // namespace hearth::data
