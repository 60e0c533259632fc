#include <algorithm>
#include <atomic>
#include <optional>
#include <stdexcept>

#include <gtest/gtest.h>

#include "hearth/core/errors.h"
#include "hearth/data/dataloader.h"
#include "hearth/data/transforms.h"

namespace hearth::data {
namespace {

// Sample i: {"index": int64 i, "pixel_values": float [1, 4, 4] holding i}.
// Optionally throws for one index, and counts calls.
class IndexDataset : public Dataset {
 public:
  explicit IndexDataset(int64_t n, int64_t throw_at = -1) : n_(n), throw_at_(throw_at) {}
  int64_t size() const override { return n_; }
  Example get(int64_t index) const override {
    check_index("IndexDataset", index, n_);
    calls_.fetch_add(1);
    if (index == throw_at_) throw std::runtime_error("sample " + std::to_string(index) + " is corrupt");
    Tensor idx = Tensor::empty({}, DType::int64);
    *idx.data<int64_t>() = index;
    Tensor img = Tensor::empty({1, 4, 4}, DType::float32);
    for (int64_t k = 0; k < 16; ++k) img.data<float>()[k] = static_cast<float>(index * 100 + k);
    return Example{{"index", idx}, {field::kPixelValues, img}};
  }
  int64_t calls() const { return calls_.load(); }

 private:
  int64_t n_, throw_at_;
  mutable std::atomic<int64_t> calls_{0};
};

std::vector<int64_t> indices_of(const Batch& b) { return b.at("index").to_vector<int64_t>(); }

// Every batch of one epoch, as index lists and image bytes.
struct EpochRecord {
  std::vector<std::vector<int64_t>> indices;
  std::vector<std::vector<float>> images;
  bool operator==(const EpochRecord&) const = default;
};

EpochRecord record_rest(DataLoader& loader) {
  EpochRecord r;
  while (auto b = loader.next()) {
    r.indices.push_back(indices_of(*b));
    r.images.push_back(b->at(field::kPixelValues).to_vector<float>());
  }
  return r;
}

EpochRecord record_epoch(DataLoader& loader, int64_t epoch) {
  loader.set_epoch(epoch);
  return record_rest(loader);
}

std::shared_ptr<const Dataset> augmented(int64_t n) {
  auto t = std::make_shared<Compose>(
      std::vector<TransformPtr>{std::make_shared<RandomCrop>(4, 1), std::make_shared<RandomHorizontalFlip>(0.5)});
  return std::make_shared<TransformDataset>(std::make_shared<IndexDataset>(n), t, 2024);
}

TEST(DataLoader, BatchesInOrderWithoutShuffle) {
  DataLoader loader(std::make_shared<IndexDataset>(7), {.batch_size = 3});
  EXPECT_EQ(loader.num_batches(), 3);
  auto b0 = loader.next();
  ASSERT_TRUE(b0);
  EXPECT_EQ(indices_of(*b0), (std::vector<int64_t>{0, 1, 2}));
  EXPECT_EQ(b0->at(field::kPixelValues).shape(), (Shape{3, 1, 4, 4}));
  EXPECT_EQ(b0->at(field::kPixelValues).to_vector<float>()[16], 100.0f);
  EXPECT_EQ(indices_of(*loader.next()), (std::vector<int64_t>{3, 4, 5}));
  EXPECT_EQ(indices_of(*loader.next()), (std::vector<int64_t>{6}));
  EXPECT_FALSE(loader.next());
  EXPECT_FALSE(loader.next()) << "an exhausted epoch stays exhausted";
  EXPECT_EQ(loader.state(), (DataLoaderState{0, 3}));
}

TEST(DataLoader, MoreWorkersThanFourPerCoreAreRefused) {
  // 600 workers ended in std::terminate when the system refused a thread.
  const int64_t too_many = max_num_workers() + 1;
  try {
    DataLoader loader(std::make_shared<IndexDataset>(7), {.batch_size = 3, .num_workers = too_many});
    FAIL() << "accepted " << too_many << " workers";
  } catch (const ValueError& e) {
    EXPECT_NE(std::string(e.what()).find("num_workers must be in [0, " + std::to_string(max_num_workers()) + "]"),
              std::string::npos)
        << e.what();
  }
  DataLoader most(std::make_shared<IndexDataset>(7), {.batch_size = 3, .num_workers = max_num_workers()});
  int64_t batches = 0;
  while (most.next()) ++batches;
  EXPECT_EQ(batches, 3);
}

TEST(DataLoader, DropLastDropsTheShortBatch) {
  DataLoader loader(std::make_shared<IndexDataset>(10), {.batch_size = 3, .drop_last = true});
  EXPECT_EQ(loader.num_batches(), 3);
  EpochRecord r = record_epoch(loader, 0);
  ASSERT_EQ(r.indices.size(), 3u);
  for (const auto& b : r.indices) EXPECT_EQ(b.size(), 3u);
  DataLoader small(std::make_shared<IndexDataset>(2), {.batch_size = 3, .drop_last = true});
  EXPECT_EQ(small.num_batches(), 0);
  EXPECT_FALSE(small.next());
}

TEST(DataLoader, ShuffleDependsOnSeedAndEpochOnly) {
  auto data = std::make_shared<IndexDataset>(50);
  DataLoaderOptions o{.batch_size = 8, .shuffle = true, .seed = 11};
  DataLoader a(data, o), b(data, o);
  EpochRecord a1 = record_epoch(a, 1);
  EXPECT_EQ(a1, record_epoch(b, 1));
  EpochRecord a2 = record_epoch(a, 2);
  EXPECT_NE(a1.indices, a2.indices);
  EXPECT_EQ(a1, record_epoch(a, 1)) << "an epoch can be replayed";
  // Each epoch visits every sample once.
  std::vector<int64_t> all;
  for (const auto& batch : a2.indices) all.insert(all.end(), batch.begin(), batch.end());
  std::sort(all.begin(), all.end());
  ASSERT_EQ(all.size(), 50u);
  for (int64_t i = 0; i < 50; ++i) EXPECT_EQ(all[static_cast<size_t>(i)], i);
  DataLoader c(data, {.batch_size = 8, .shuffle = true, .seed = 12});
  EXPECT_NE(a1.indices, record_epoch(c, 1).indices);
}

TEST(DataLoader, WorkerCountDoesNotChangeTheBatches) {
  auto data = augmented(23);
  EpochRecord reference;
  for (int64_t workers : {0, 1, 3}) {
    SCOPED_TRACE(workers);
    DataLoader loader(data,
                      {.batch_size = 4, .shuffle = true, .seed = 3, .num_workers = workers, .prefetch_factor = 2});
    EpochRecord r = record_epoch(loader, 5);
    EXPECT_EQ(r.indices.size(), 6u);
    if (workers == 0) {
      reference = r;
    } else {
      EXPECT_EQ(r, reference);
    }
  }
}

TEST(DataLoader, ResumesMidEpochWithIdenticalBatches) {
  auto data = augmented(30);
  for (int64_t workers : {0, 2}) {
    SCOPED_TRACE(workers);
    DataLoaderOptions o{.batch_size = 4, .shuffle = true, .seed = 9, .num_workers = workers};
    DataLoader full(data, o);
    EpochRecord whole = record_epoch(full, 2);

    DataLoader first(data, o);
    first.set_epoch(2);
    for (int k = 0; k < 3; ++k) ASSERT_TRUE(first.next());
    DataLoaderState saved = first.state();
    EXPECT_EQ(saved, (DataLoaderState{2, 3}));

    DataLoader resumed(data, o);
    resumed.load_state(saved);
    EpochRecord rest = record_rest(resumed);
    ASSERT_EQ(rest.indices.size(), whole.indices.size() - 3);
    EXPECT_TRUE(std::equal(rest.indices.begin(), rest.indices.end(), whole.indices.begin() + 3));
    EXPECT_TRUE(std::equal(rest.images.begin(), rest.images.end(), whole.images.begin() + 3));
    // The interrupted loader itself carries on the same way.
    EpochRecord carry_on = record_rest(first);
    EXPECT_EQ(carry_on, rest);
  }
}

TEST(DataLoader, RangeIterationContinuesThenAdvancesEpochs) {
  DataLoaderOptions o{.batch_size = 5, .shuffle = true, .seed = 1, .num_workers = 2};
  auto data = std::make_shared<IndexDataset>(10);
  DataLoader loader(data, o);
  std::vector<std::vector<int64_t>> seen;
  for (Batch& b : loader) {
    seen.push_back(indices_of(b));
    EXPECT_EQ(loader.state().batches_yielded, static_cast<int64_t>(seen.size()));
  }
  EXPECT_EQ(loader.state(), (DataLoaderState{0, 2}));
  // A second pass without set_epoch moves on to epoch 1.
  std::vector<std::vector<int64_t>> second;
  for (Batch& b : loader) second.push_back(indices_of(b));
  EXPECT_EQ(loader.epoch(), 1);
  DataLoader ref(data, o);
  EXPECT_EQ(record_epoch(ref, 1).indices, second);
  // Breaking out keeps the position; the next loop continues from it.
  loader.set_epoch(4);
  for (Batch& b : loader) {
    (void)b;
    break;
  }
  EXPECT_EQ(loader.state(), (DataLoaderState{4, 1}));
  int rest = 0;
  for (Batch& b : loader) {
    (void)b;
    ++rest;
  }
  EXPECT_EQ(rest, 1);
  EXPECT_EQ(loader.epoch(), 4);
}

TEST(DataLoader, ShardsCoverEveryIndexOncePerEpoch) {
  auto data = std::make_shared<IndexDataset>(24);
  std::vector<int64_t> all;
  for (int64_t rank = 0; rank < 3; ++rank) {
    DataLoader loader(data, {.batch_size = 5, .shuffle = true, .seed = 4, .num_replicas = 3, .rank = rank});
    EXPECT_EQ(loader.num_samples(), 8);
    EXPECT_EQ(loader.num_batches(), 2);
    for (const auto& b : record_epoch(loader, 6).indices) all.insert(all.end(), b.begin(), b.end());
  }
  std::sort(all.begin(), all.end());
  ASSERT_EQ(all.size(), 24u);
  for (int64_t i = 0; i < 24; ++i) EXPECT_EQ(all[static_cast<size_t>(i)], i);

  // Uneven: 10 samples on 4 ranks pad to 12, every rank gets 3.
  std::vector<int> count(10, 0);
  auto ten = std::make_shared<IndexDataset>(10);
  for (int64_t rank = 0; rank < 4; ++rank) {
    DataLoader loader(ten, {.batch_size = 2, .shuffle = true, .seed = 4, .num_replicas = 4, .rank = rank});
    EXPECT_EQ(loader.num_samples(), 3);
    for (const auto& b : record_epoch(loader, 0).indices)
      for (int64_t i : b) count[static_cast<size_t>(i)]++;
  }
  int total = 0;
  for (int c : count) {
    EXPECT_GE(c, 1);
    total += c;
  }
  EXPECT_EQ(total, 12);
}

TEST(DataLoader, WorkerErrorsReachTheCallerAndTheBatchIsRetried) {
  for (int64_t workers : {0, 2}) {
    SCOPED_TRACE(workers);
    auto data = std::make_shared<IndexDataset>(9, /*throw_at=*/4);
    DataLoader loader(data, {.batch_size = 3, .num_workers = workers});
    ASSERT_TRUE(loader.next());
    EXPECT_THROW(loader.next(), std::runtime_error);
    EXPECT_EQ(loader.state(), (DataLoaderState{0, 1})) << "a failed batch is not counted";
    EXPECT_THROW(loader.next(), std::runtime_error);
    loader.load_state({0, 2});
    auto last = loader.next();
    ASSERT_TRUE(last);
    EXPECT_EQ(indices_of(*last), (std::vector<int64_t>{6, 7, 8}));
  }
}

TEST(DataLoader, PrefetchStaysWithinItsWindow) {
  auto data = std::make_shared<IndexDataset>(100);
  DataLoader loader(data, {.batch_size = 2, .num_workers = 1, .prefetch_factor = 2});
  ASSERT_TRUE(loader.next());
  // After batch 0 is taken, workers may hold batches 1 and 2 and be building
  // one more: at most 1 + window + 1 batches have been requested.
  EXPECT_LE(data->calls(), 2 * 4);
}

TEST(DataLoader, BatchMemoryIsReusedAndNeverOverwrittenWhileHeld) {
  auto ds = std::make_shared<IndexDataset>(64);
  for (int64_t workers : {0, 2}) {
    DataLoader loader(ds, {.batch_size = 4, .shuffle = true, .seed = 5, .num_workers = workers});
    std::optional<Batch> kept;
    std::vector<float> kept_pixels;
    for (int64_t epoch = 0; epoch < 3; ++epoch) {
      loader.set_epoch(epoch);
      for (Batch& b : loader) {
        if (!kept) {
          kept = b;  // held through every later batch
          const Tensor& px = kept->at(field::kPixelValues);
          kept_pixels.assign(px.data<float>(), px.data<float>() + px.numel());
        }
      }
    }
    // 48 batches of two fields; a fresh block for each would be 96.
    EXPECT_LE(loader.batch_buffers().blocks_allocated(), 2u * (2 * 3 + 3 + 1)) << workers << " workers";
    const Tensor& px = kept->at(field::kPixelValues);
    EXPECT_TRUE(std::equal(kept_pixels.begin(), kept_pixels.end(), px.data<float>())) << workers << " workers";
    // The pooled batches equal what a custom collate (plain memory) builds.
    DataLoader plain(
        ds,
        {.batch_size = 4, .shuffle = true, .seed = 5, .num_workers = workers, .collate = [](std::vector<Example> s) {
           return default_collate(std::move(s));
         }});
    plain.set_epoch(0);
    std::optional<Batch> first = plain.next();
    EXPECT_EQ(indices_of(*first), indices_of(*kept));
  }
}

TEST(DataLoader, CustomCollate) {
  DataLoaderOptions o{.batch_size = 4};
  o.collate = [](std::vector<Example> samples) {
    Batch b;
    Tensor n = Tensor::empty({}, DType::int64);
    *n.data<int64_t>() = static_cast<int64_t>(samples.size());
    b["count"] = n;
    return b;
  };
  DataLoader loader(std::make_shared<IndexDataset>(6), o);
  EXPECT_EQ(loader.next()->at("count").item<int64_t>(), 4);
  EXPECT_EQ(loader.next()->at("count").item<int64_t>(), 2);
}

TEST(DataLoader, RejectsBadOptionsAndStates) {
  auto data = std::make_shared<IndexDataset>(10);
  EXPECT_THROW(DataLoader(nullptr, {}), ValueError);
  EXPECT_THROW(DataLoader(data, {.batch_size = 0}), ValueError);
  EXPECT_THROW(DataLoader(data, {.num_workers = -1}), ValueError);
  EXPECT_THROW(DataLoader(data, {.prefetch_factor = 0}), ValueError);
  EXPECT_THROW(DataLoader(data, {.num_replicas = 2, .rank = 2}), ValueError);
  DataLoader loader(data, {.batch_size = 4});
  EXPECT_THROW(loader.load_state({0, 4}), ValueError);
  EXPECT_THROW(loader.load_state({0, -1}), ValueError);
  loader.load_state({3, 3});
  EXPECT_FALSE(loader.next());
}

TEST(DataLoader, TensorDatasetRows) {
  Tensor x = Tensor::empty({5, 2}, DType::float32);
  Tensor y = Tensor::empty({5}, DType::int64);
  for (int64_t i = 0; i < 5; ++i) {
    x.data<float>()[2 * i] = static_cast<float>(i);
    x.data<float>()[2 * i + 1] = static_cast<float>(-i);
    y.data<int64_t>()[i] = i * i;
  }
  auto ds = std::make_shared<TensorDataset>(Example::Map{{"input", x}, {"labels", y}});
  EXPECT_EQ(ds->size(), 5);
  DataLoader loader(ds, {.batch_size = 2});
  loader.next();
  Batch b = *loader.next();
  EXPECT_EQ(b.at("input").to_vector<float>(), (std::vector<float>{2, -2, 3, -3}));
  EXPECT_EQ(b.at("labels").to_vector<int64_t>(), (std::vector<int64_t>{4, 9}));
  EXPECT_THROW(ds->get(5), ValueError);
  EXPECT_THROW(TensorDataset(Example::Map{{"a", x}, {"b", Tensor::empty({4})}}), ShapeError);
}

}  // namespace
}  // namespace hearth::data
