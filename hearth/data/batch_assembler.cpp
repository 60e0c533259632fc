#include "hearth/data/batch_assembler.h"

#include <cstring>
#include <utility>

#include "hearth/core/errors.h"
#include "hearth/core/shape.h"

namespace hearth::data {
namespace {

std::string field_list(const Example& e) {
  std::string s;
  for (const std::string& n : e.names()) s += (s.empty() ? "" : ", ") + n;
  return s;
}

}  // namespace

BatchAssembler::BatchAssembler(int64_t count, BatchTensorFactory make_output)
    : count_(count), make_output_(std::move(make_output)) {
  HEARTH_CHECK(count >= 1, ValueError, "[collate] cannot collate an empty list of samples");
}

void BatchAssembler::add(const Example& sample) {
  HEARTH_CHECK(added_ < count_, ValueError, "[collate] the batch already holds its ", count_, " samples");
  if (added_ == 0) {
    for (const auto& [name, t] : sample) {
      HEARTH_CHECK(t.defined(), ValueError, "[collate] field '", name, "': sample 0 is undefined");
      Shape shape = t.shape();
      shape.insert(shape.begin(), count_);
      Column c{name, t.shape(), t.dtype(), make_output_(shape, t.dtype())};
      c.next = static_cast<char*>(c.out.data_ptr());
      columns_.push_back(std::move(c));
    }
  } else {
    bool same = sample.size() == columns_.size();
    for (const Column& c : columns_) same = same && sample.contains(c.name);
    if (!same) {
      std::string first;
      for (const Column& c : columns_) first += (first.empty() ? "" : ", ") + c.name;
      HEARTH_THROW(ValueError, "[collate] sample ", added_, " has fields {", field_list(sample), "} but sample 0 has {",
                   first, "}");
    }
  }
  for (Column& c : columns_) {
    const Tensor& t = sample.at(c.name);
    HEARTH_CHECK(t.defined(), ValueError, "[collate] field '", c.name, "': sample ", added_, " is undefined");
    HEARTH_CHECK(t.shape() == c.shape, ShapeError, "[collate] field '", c.name, "': sample ", added_, " has shape ",
                 t.shape_string(), " but sample 0 has shape ", shape_str(c.shape),
                 "; default_collate stacks equal shapes only (pad the samples or pass a custom collate)");
    HEARTH_CHECK(t.dtype() == c.dtype, TypeError, "[collate] field '", c.name, "': sample ", added_, " has dtype ",
                 dtype_name(t.dtype()), " but sample 0 has dtype ", dtype_name(c.dtype));
    if (c.out.numel() == 0) continue;
    Tensor host = t.device().is_cpu() ? t : t.detach().cpu();
    if (!host.is_contiguous()) host = host.contiguous();
    std::memcpy(c.next, host.data_ptr(), host.nbytes());
    c.next += host.nbytes();
  }
  ++added_;
}

Batch BatchAssembler::finish() {
  HEARTH_CHECK(added_ == count_, ValueError, "[collate] the batch has ", added_, " of its ", count_, " samples");
  Batch batch;
  for (Column& c : columns_) batch[c.name] = std::move(c.out);
  columns_.clear();
  return batch;
}

}  // namespace hearth::data
