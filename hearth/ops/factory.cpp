#include "hearth/ops/factory.h"

#include "hearth/core/checked_size.h"
#include "hearth/ops/elementwise.h"
#include "hearth/ops/op_utils.h"

namespace hearth {

Tensor empty(const Shape& shape, DType dtype, Device device) { return Tensor::empty(shape, dtype, device); }

Tensor full(const Shape& shape, const Scalar& value, DType dtype, Device device) {
  Tensor t = Tensor::empty(shape, dtype, device);
  fill_(t, value);
  return t;
}

Tensor zeros(const Shape& shape, DType dtype, Device device) { return full(shape, 0, dtype, device); }
Tensor ones(const Shape& shape, DType dtype, Device device) { return full(shape, 1, dtype, device); }
Tensor empty_like(const Tensor& t) { return Tensor::empty(t.shape(), t.dtype(), t.device()); }
Tensor zeros_like(const Tensor& t) { return zeros(t.shape(), t.dtype(), t.device()); }
Tensor ones_like(const Tensor& t) { return ones(t.shape(), t.dtype(), t.device()); }
Tensor full_like(const Tensor& t, const Scalar& value) { return full(t.shape(), value, t.dtype(), t.device()); }

Tensor scalar_tensor(const Scalar& value, DType dtype, Device device) { return full({}, value, dtype, device); }

Tensor from_buffer(const void* data, const Shape& shape, DType dtype, Device device) {
  Tensor host = Tensor::from_storage(
      std::make_shared<Storage>(const_cast<void*>(data), checked_nbytes(shape, itemsize(dtype)), Device(), nullptr),
      dtype, shape, contiguous_strides(shape), 0);
  Tensor out = Tensor::empty(shape, dtype, device);
  if (out.numel() > 0) copy_into(out, host);  // an empty vector's data() may be null
  return out;
}

template <typename T>
Tensor tensor(const std::vector<T>& values, const Shape& shape, Device device) {
  HEARTH_CHECK(static_cast<int64_t>(values.size()) == numel_of(shape), ShapeError, "[tensor] ", values.size(),
               " values do not fill shape ", shape_str(shape), " (", numel_of(shape), " elements)");
  if constexpr (std::is_same_v<T, bool>) {  // std::vector<bool> is packed: unpack first
    std::vector<uint8_t> bytes(values.begin(), values.end());
    return from_buffer(bytes.data(), shape, DType::bool_, device);
  } else {
    return from_buffer(values.data(), shape, dtype_of_v<T>, device);
  }
}

template Tensor tensor(const std::vector<float>&, const Shape&, Device);
template Tensor tensor(const std::vector<double>&, const Shape&, Device);
template Tensor tensor(const std::vector<BFloat16>&, const Shape&, Device);
template Tensor tensor(const std::vector<Half>&, const Shape&, Device);
template Tensor tensor(const std::vector<int64_t>&, const Shape&, Device);
template Tensor tensor(const std::vector<int32_t>&, const Shape&, Device);
template Tensor tensor(const std::vector<uint8_t>&, const Shape&, Device);
template Tensor tensor(const std::vector<bool>&, const Shape&, Device);

Tensor tensor(std::initializer_list<float> values, Device device) {
  return tensor(std::vector<float>(values), device);
}

const Tensor& zero_(const Tensor& t) { return fill_(t, 0); }

}  // namespace hearth
