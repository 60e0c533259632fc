// Datasets: samples by index.
//
// A sample is an `Example`: tensors by field name, rather than a fixed
// {input, target} pair, because models disagree on how many inputs they take:
// an image classifier reads {"pixel_values", "labels"}, BERT reads
// {"input_ids", "attention_mask", "token_type_ids", "labels"}. Field names
// follow Hugging Face's, so a batch can be handed to a model the way
// `model(**batch)` is in Python, and the target is always "labels". Collating
// a list of Examples gives a `Batch` of the same shape with a leading batch
// dimension (hearth/data/collate.h).
#pragma once

#include <cstdint>
#include <initializer_list>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "hearth/core/tensor.h"

namespace hearth::data {

// The conventional field names.
namespace field {
inline constexpr const char* kPixelValues = "pixel_values";
inline constexpr const char* kLabels = "labels";
inline constexpr const char* kInputIds = "input_ids";
inline constexpr const char* kAttentionMask = "attention_mask";
inline constexpr const char* kTokenTypeIds = "token_type_ids";
}  // namespace field

class Example {
 public:
  using Map = std::map<std::string, Tensor>;

  Example() = default;
  Example(std::initializer_list<Map::value_type> fields) : fields_(fields) {}
  explicit Example(Map fields) : fields_(std::move(fields)) {}

  // Inserts the field if missing (for building an Example).
  Tensor& operator[](const std::string& name) { return fields_[name]; }
  // Throws ValueError naming the fields present when `name` is not one.
  const Tensor& at(const std::string& name) const;
  bool contains(const std::string& name) const { return fields_.count(name) != 0; }
  size_t size() const { return fields_.size(); }
  bool empty() const { return fields_.empty(); }
  std::vector<std::string> names() const;  // sorted
  const Map& fields() const { return fields_; }

  Map::const_iterator begin() const { return fields_.begin(); }
  Map::const_iterator end() const { return fields_.end(); }

 private:
  Map fields_;
};

// A collated Example: every field gained a leading batch dimension.
using Batch = Example;

// The interface every dataset implements. get() is called concurrently from
// the DataLoader's worker threads, so it must not mutate shared state.
class Dataset {
 public:
  virtual ~Dataset() = default;
  virtual int64_t size() const = 0;
  virtual Example get(int64_t index) const = 0;
  // What the DataLoader calls. Datasets with random augmentation override it
  // so their randomness depends on (seed, epoch, index) alone and an epoch can
  // be replayed exactly (hearth/data/transforms.h); the rest keep this default.
  virtual Example get_for_epoch(int64_t index, int64_t epoch) const { return get(index); }
};

// Rows of in-memory tensors: sample i holds row i of each field (PyTorch's
// TensorDataset). Every field must have the same size along dim 0. Samples
// are views; collation copies them.
class TensorDataset : public Dataset {
 public:
  explicit TensorDataset(Example::Map fields);
  int64_t size() const override { return size_; }
  Example get(int64_t index) const override;

 private:
  Example::Map fields_;
  int64_t size_ = 0;
};

// Throws ValueError "[<who>] index <i> is out of range for a dataset of <n> samples".
void check_index(const char* who, int64_t index, int64_t size);

}  // namespace hearth::data
