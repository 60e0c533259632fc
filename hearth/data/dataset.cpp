#include "hearth/data/dataset.h"

#include "hearth/core/errors.h"

namespace hearth::data {

const Tensor& Example::at(const std::string& name) const {
  auto it = fields_.find(name);
  if (it == fields_.end()) {
    std::string present;
    for (const auto& [n, t] : fields_) present += (present.empty() ? "" : ", ") + n;
    HEARTH_THROW(ValueError, "[data] the example has no field '", name,
                 "' (it has: ", present.empty() ? "no fields" : present, ")");
  }
  return it->second;
}

std::vector<std::string> Example::names() const {
  std::vector<std::string> out;
  out.reserve(fields_.size());
  for (const auto& [n, t] : fields_) out.push_back(n);
  return out;
}

void check_index(const char* who, int64_t index, int64_t size) {
  HEARTH_CHECK(index >= 0 && index < size, ValueError, "[", who, "] index ", index,
               " is out of range for a dataset of ", size, " samples");
}

TensorDataset::TensorDataset(Example::Map fields) : fields_(std::move(fields)) {
  HEARTH_CHECK(!fields_.empty(), ValueError, "[TensorDataset] needs at least one field");
  const std::string* first = nullptr;
  for (const auto& [name, t] : fields_) {
    HEARTH_CHECK(t.defined(), ValueError, "[TensorDataset] field '", name, "' is undefined");
    HEARTH_CHECK(t.dim() >= 1, ShapeError, "[TensorDataset] field '", name,
                 "' must have a leading sample dimension, found a 0-dim tensor");
    if (!first) {
      first = &name;
      size_ = t.size(0);
    }
    HEARTH_CHECK(t.size(0) == size_, ShapeError, "[TensorDataset] field '", name, "' has ", t.size(0),
                 " rows but field '", *first, "' has ", size_);
  }
}

Example TensorDataset::get(int64_t index) const {
  check_index("TensorDataset", index, size_);
  Example ex;
  for (const auto& [name, t] : fields_) ex[name] = t.select(0, index);
  return ex;
}

}  // namespace hearth::data
