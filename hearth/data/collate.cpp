#include "hearth/data/collate.h"

#include <cstring>

#include "hearth/core/errors.h"
#include "hearth/ops/factory.h"

namespace hearth::data {
namespace {

// Copies a strided CPU view into `dst` in row-major order; the innermost
// dimension goes by one memcpy when it is dense.
void gather(const char* src, const Shape& shape, const Strides& strides, size_t elem, size_t dim, char*& dst) {
  if (dim == shape.size()) {
    std::memcpy(dst, src, elem);
    dst += elem;
    return;
  }
  int64_t n = shape[dim];
  int64_t step = strides[dim] * static_cast<int64_t>(elem);
  if (dim + 1 == shape.size() && strides[dim] == 1) {
    std::memcpy(dst, src, static_cast<size_t>(n) * elem);
    dst += static_cast<size_t>(n) * elem;
    return;
  }
  for (int64_t i = 0; i < n; ++i) gather(src + i * step, shape, strides, elem, dim + 1, dst);
}

}  // namespace

Tensor stack_samples(const std::vector<Tensor>& samples, const std::string& field) {
  return stack_samples_into(samples, field,
                            [](const Shape& shape, DType dtype) { return Tensor::empty(shape, dtype); });
}

Tensor stack_samples_into(const std::vector<Tensor>& samples, const std::string& field,
                          const BatchTensorFactory& make_output) {
  HEARTH_CHECK(!samples.empty(), ValueError, "[collate] field '", field, "': nothing to stack (no samples)");
  for (size_t i = 0; i < samples.size(); ++i)
    HEARTH_CHECK(samples[i].defined(), ValueError, "[collate] field '", field, "': sample ", i, " is undefined");
  const Tensor& first = samples[0];
  for (size_t i = 1; i < samples.size(); ++i) {
    HEARTH_CHECK(samples[i].shape() == first.shape(), ShapeError, "[collate] field '", field, "': sample ", i,
                 " has shape ", samples[i].shape_string(), " but sample 0 has shape ", first.shape_string(),
                 "; default_collate stacks equal shapes only (pad the samples or pass a custom collate)");
    HEARTH_CHECK(samples[i].dtype() == first.dtype(), TypeError, "[collate] field '", field, "': sample ", i,
                 " has dtype ", dtype_name(samples[i].dtype()), " but sample 0 has dtype ", dtype_name(first.dtype()));
  }
  Shape shape = first.shape();
  shape.insert(shape.begin(), static_cast<int64_t>(samples.size()));
  Tensor out = make_output(shape, first.dtype());
  if (out.numel() == 0) return out;
  char* dst = static_cast<char*>(out.data_ptr());
  size_t elem = first.element_size();
  for (const Tensor& s : samples) {
    Tensor host = s.device().is_cpu() ? s : s.detach().cpu();
    const char* src = static_cast<const char*>(host.data_ptr());
    if (host.is_contiguous()) {
      std::memcpy(dst, src, host.nbytes());
      dst += host.nbytes();
    } else {
      gather(src, host.shape(), host.strides(), elem, 0, dst);
    }
  }
  return out;
}

Batch default_collate(std::vector<Example> samples) {
  return default_collate_into(std::move(samples),
                              [](const Shape& shape, DType dtype) { return Tensor::empty(shape, dtype); });
}

Batch default_collate_into(std::vector<Example> samples, const BatchTensorFactory& make_output) {
  HEARTH_CHECK(!samples.empty(), ValueError, "[collate] cannot collate an empty list of samples");
  const Example& first = samples[0];
  for (size_t i = 1; i < samples.size(); ++i) {
    if (samples[i].size() == first.size()) {
      bool same = true;
      for (const auto& [name, t] : first) same = same && samples[i].contains(name);
      if (same) continue;
    }
    std::string a, b;
    for (const std::string& n : first.names()) a += (a.empty() ? "" : ", ") + n;
    for (const std::string& n : samples[i].names()) b += (b.empty() ? "" : ", ") + n;
    HEARTH_THROW(ValueError, "[collate] sample ", i, " has fields {", b, "} but sample 0 has {", a, "}");
  }
  Batch batch;
  std::vector<Tensor> column(samples.size());
  for (const auto& [name, t] : first) {
    for (size_t i = 0; i < samples.size(); ++i) column[i] = samples[i].at(name);
    batch[name] = stack_samples_into(column, name, make_output);
  }
  return batch;
}

Tensor int64_row(const std::vector<int64_t>& values) { return tensor(values, {static_cast<int64_t>(values.size())}); }

Tensor pad_int64_row(const Tensor& row, int64_t length, int64_t value) {
  const int64_t n = row.size(0);
  if (n == length) return row;
  std::vector<int64_t> v = row.contiguous().to_vector<int64_t>();
  v.resize(static_cast<size_t>(length), value);
  return int64_row(v);
}

}  // namespace hearth::data
