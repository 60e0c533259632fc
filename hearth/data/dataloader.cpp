#include "hearth/data/dataloader.h"

#include <algorithm>
#include <condition_variable>
#include <exception>
#include <map>
#include <mutex>
#include <system_error>
#include <thread>

#include "hearth/core/errors.h"
#include "hearth/core/shape.h"
#include "hearth/core/storage.h"
#include "hearth/data/batch_assembler.h"
#include "hearth/data/device_image_batches.h"

namespace hearth::data {

// Worker threads that build batches [next, end) of one epoch, at most
// `window` ahead of the consumer, and hand them over strictly in order.
class DataLoader::Prefetcher {
 public:
  Prefetcher(const DataLoader& loader, std::shared_ptr<const std::vector<int64_t>> order, int64_t epoch, int64_t first,
             int64_t end, int64_t workers, int64_t window)
      : loader_(loader),
        order_(std::move(order)),
        epoch_(epoch),
        claim_(first),
        consume_(first),
        end_(end),
        window_(window) {
    threads_.reserve(static_cast<size_t>(workers));
    try {
      for (int64_t i = 0; i < workers; ++i) threads_.emplace_back([this] { work(); });
    } catch (const std::system_error& e) {
      // The system refused a thread: stop the ones started, then report.
      const size_t started = threads_.size();
      stop_and_join();
      HEARTH_THROW(ValueError, "[dataloader] could not start worker thread ", started + 1, " of ", workers, ": ",
                   e.what(), " (use fewer workers)");
    }
  }

  ~Prefetcher() { stop_and_join(); }

  void stop_and_join() {
    {
      std::lock_guard<std::mutex> lock(mu_);
      stop_ = true;
    }
    work_cv_.notify_all();
    for (std::thread& t : threads_) t.join();
    threads_.clear();
  }

  int64_t epoch() const { return epoch_; }
  int64_t position() const { return consume_; }

  // Batch number position() (the caller checked it is < end). Rethrows what
  // building it threw, without advancing.
  Batch take() {
    std::unique_lock<std::mutex> lock(mu_);
    ready_cv_.wait(lock, [&] { return ready_.count(consume_) != 0; });
    auto it = ready_.find(consume_);
    if (it->second.error) std::rethrow_exception(it->second.error);
    Batch batch = std::move(it->second.batch);
    ready_.erase(it);
    ++consume_;
    lock.unlock();
    work_cv_.notify_all();
    return batch;
  }

 private:
  struct Result {
    Batch batch;
    std::exception_ptr error;
  };

  void work() {
    for (;;) {
      int64_t b;
      {
        std::unique_lock<std::mutex> lock(mu_);
        work_cv_.wait(lock, [&] { return stop_ || claim_ >= end_ || claim_ < consume_ + window_; });
        if (stop_ || claim_ >= end_) return;
        b = claim_++;
      }
      Result r;
      try {
        r.batch = loader_.build_batch(*order_, epoch_, b);
      } catch (...) {
        r.error = std::current_exception();
      }
      {
        std::lock_guard<std::mutex> lock(mu_);
        ready_.emplace(b, std::move(r));
      }
      ready_cv_.notify_all();
    }
  }

  const DataLoader& loader_;
  std::shared_ptr<const std::vector<int64_t>> order_;
  const int64_t epoch_;
  std::mutex mu_;
  std::condition_variable work_cv_, ready_cv_;
  int64_t claim_;    // next batch a worker will build
  int64_t consume_;  // next batch the consumer takes
  const int64_t end_;
  const int64_t window_;
  bool stop_ = false;
  std::map<int64_t, Result> ready_;
  std::vector<std::thread> threads_;
};

int64_t max_num_workers() {
  const unsigned cores = std::thread::hardware_concurrency();
  return 4 * static_cast<int64_t>(cores > 0 ? cores : 1);
}

DataLoader::DataLoader(std::shared_ptr<const Dataset> dataset, DataLoaderOptions options)
    : dataset_(std::move(dataset)), options_(std::move(options)) {
  HEARTH_CHECK(dataset_ != nullptr, ValueError, "[dataloader] dataset is null");
  HEARTH_CHECK(options_.batch_size >= 1, ValueError, "[dataloader] batch_size must be >= 1, got ", options_.batch_size);
  HEARTH_CHECK(options_.num_workers >= 0 && options_.num_workers <= max_num_workers(), ValueError,
               "[dataloader] num_workers must be in [0, ", max_num_workers(), "] (4 per CPU core), got ",
               options_.num_workers);
  HEARTH_CHECK(options_.prefetch_factor >= 1, ValueError, "[dataloader] prefetch_factor must be >= 1, got ",
               options_.prefetch_factor);
  HEARTH_CHECK(options_.num_replicas >= 1, ValueError, "[dataloader] num_replicas must be >= 1, got ",
               options_.num_replicas);
  HEARTH_CHECK(options_.rank >= 0 && options_.rank < options_.num_replicas, ValueError,
               "[dataloader] rank must be in [0, num_replicas = ", options_.num_replicas, "), got ", options_.rank);
  if (!options_.collate) options_.collate = default_collate;
  auto* const* target = options_.collate.target<Batch (*)(std::vector<Example>)>();
  default_collate_ = target != nullptr && *target == &default_collate;
  // Enough for every batch in flight (built ahead, or being built) plus the
  // one the consumer holds and the one it just dropped.
  const int64_t in_flight = std::max<int64_t>(options_.num_workers, 1) * (options_.prefetch_factor + 1) + 2;
  // Two blocks per batch (pixels and labels): the most a steady state has
  // alive at once, so the pool holds no more memory than loading needs.
  batch_buffers_ = BatchBufferPool::create(static_cast<size_t>(2 * in_flight));
  // A custom collate expects the samples themselves, made on the host.
  if (default_collate_)
    device_images_ =
        DeviceImageBatches::for_loader(*dataset_, options_.device, options_.image_dtype, options_.image_memory_format);
}

DataLoader::~DataLoader() { stop_prefetch(); }

int64_t DataLoader::num_samples() const { return samples_per_replica(dataset_->size(), options_.num_replicas); }

int64_t DataLoader::num_batches() const {
  int64_t n = num_samples(), b = options_.batch_size;
  return options_.drop_last ? n / b : (n + b - 1) / b;
}

std::vector<int64_t> DataLoader::epoch_indices(int64_t epoch) const {
  SamplerOptions s;
  s.shuffle = options_.shuffle;
  s.seed = options_.seed;
  s.num_replicas = options_.num_replicas;
  s.rank = options_.rank;
  return data::epoch_indices(dataset_->size(), s, epoch);
}

std::shared_ptr<const std::vector<int64_t>> DataLoader::current_order() {
  if (!order_ || order_epoch_ != epoch_) {
    order_ = std::make_shared<const std::vector<int64_t>>(epoch_indices(epoch_));
    order_epoch_ = epoch_;
  }
  return order_;
}

void DataLoader::stop_prefetch() { prefetcher_.reset(); }

void DataLoader::set_epoch(int64_t epoch) { load_state({epoch, 0}); }

void DataLoader::load_state(const DataLoaderState& state) {
  HEARTH_CHECK(state.batches_yielded >= 0 && state.batches_yielded <= num_batches(), ValueError,
               "[dataloader] cannot resume after ", state.batches_yielded, " batches: an epoch has ", num_batches(),
               " (was the batch size, dataset or replica count different when the state was saved?)");
  if (state.epoch != epoch_ || state.batches_yielded != position_) stop_prefetch();
  epoch_ = state.epoch;
  position_ = state.batches_yielded;
}

Batch DataLoader::build_batch(const std::vector<int64_t>& order, int64_t epoch, int64_t batch) const {
  size_t first = static_cast<size_t>(batch * options_.batch_size);
  size_t last = std::min(order.size(), first + static_cast<size_t>(options_.batch_size));
  if (default_collate_) {
    // In the worker thread, off the training loop's path: each sample goes
    // straight into the batch's final memory as soon as it is built.
    BatchTensorFactory make_output = [this](const Shape& shape, DType dtype) {
      if (!options_.pin_memory) return batch_buffers_->empty(shape, dtype);
      const size_t nbytes = static_cast<size_t>(numel_of(shape)) * itemsize(dtype);
      return Tensor::from_storage(Storage::allocate_pinned(nbytes), dtype, shape, contiguous_strides(shape), 0);
    };
    if (device_images_) return device_images_->build(order.data() + first, last - first, epoch, make_output);
    BatchAssembler assembler(static_cast<int64_t>(last - first), std::move(make_output));
    for (size_t i = first; i < last; ++i) assembler.add(dataset_->get_for_epoch(order[i], epoch));
    return assembler.finish();
  }
  std::vector<Example> samples;
  samples.reserve(last - first);
  for (size_t i = first; i < last; ++i) samples.push_back(dataset_->get_for_epoch(order[i], epoch));
  Batch b = options_.collate(std::move(samples));
  if (options_.pin_memory)  // in the worker thread, off the training loop's path
    for (const std::string& name : b.names()) b[name] = b[name].pin_memory();
  return b;
}

std::optional<Batch> DataLoader::next() {
  int64_t total = num_batches();
  if (position_ >= total) {
    stop_prefetch();
    return std::nullopt;
  }
  if (options_.num_workers == 0) {
    Batch b = build_batch(*current_order(), epoch_, position_);
    ++position_;
    return b;
  }
  if (!prefetcher_ || prefetcher_->epoch() != epoch_ || prefetcher_->position() != position_) {
    stop_prefetch();
    prefetcher_ = std::make_unique<Prefetcher>(*this, current_order(), epoch_, position_, total, options_.num_workers,
                                               options_.num_workers * options_.prefetch_factor);
  }
  std::optional<Batch> b;
  try {
    b = prefetcher_->take();
  } catch (...) {
    stop_prefetch();  // a retry starts afresh at this batch
    throw;
  }
  ++position_;
  if (position_ == total) stop_prefetch();
  return b;
}

DataLoader::Iterator::Iterator(DataLoader* loader) : loader_(loader), current_(loader->next()) {}

DataLoader::Iterator& DataLoader::Iterator::operator++() {
  current_ = loader_->next();
  return *this;
}

DataLoader::Iterator DataLoader::begin() {
  if (position_ >= num_batches() && num_batches() > 0) set_epoch(epoch_ + 1);
  return Iterator(this);
}

}  // namespace hearth::data
