// Tensor's math methods and operators: thin forwards to the functional API so
// `x.sum()` and `hearth::sum(x)` are the same op.
#include "hearth/autograd/function.h"
#include "hearth/core/device_runtime.h"
#include "hearth/core/dtype_visit.h"
#include "hearth/core/storage.h"
#include "hearth/dispatch/dispatch.h"
#include "hearth/ops/elementwise.h"
#include "hearth/ops/factory.h"
#include "hearth/ops/reduction.h"
#include "hearth/ops/type_promotion.h"
#include "hearth/ops/view.h"

namespace hearth {

Tensor Tensor::to(Device device) const {
  if (device == this->device()) return *this;
  check_device_usable(device);
  Tensor out = transfer(*this, device);
  // Moving across devices is differentiable: gradients move back.
  autograd::record("ToDeviceBackward", {*this}, {out}, [from = this->device()](const autograd::BackwardContext& c) {
    return std::vector<Tensor>{c.grad(0).to(from)};
  });
  return out;
}
Tensor Tensor::to(DType dtype) const { return cast(*this, dtype); }
Tensor Tensor::to(Device device, DType dtype) const { return to(device).to(dtype); }
Tensor Tensor::contiguous() const { return hearth::contiguous(*this); }
Tensor Tensor::contiguous(MemoryFormat fmt) const { return hearth::contiguous(*this, fmt); }

Tensor Tensor::pin_memory() const {
  HEARTH_CHECK(device().is_cpu(), DeviceError, "[pin_memory] only CPU tensors can be pinned, this one is on ",
               device().str());
  if (is_pinned()) return *this;
  const size_t nbytes = static_cast<size_t>(numel()) * itemsize(dtype());
  Tensor out = Tensor::from_storage(Storage::allocate_pinned(nbytes), dtype(), shape(), contiguous_strides(shape()), 0);
  if (numel() > 0) copy_into(out, *this);
  return out;
}

Tensor Tensor::clone() const {
  // As torch's preserve_format: a channels_last tensor clones channels_last.
  Tensor out = Tensor::empty(shape(), dtype(), device(), suggest_memory_format());
  if (numel() > 0) copy_into(out, *this);
  autograd::record("CloneBackward", {*this}, {out},
                   [](const autograd::BackwardContext& c) { return std::vector<Tensor>{c.grad(0)}; });
  return out;
}

Scalar Tensor::item() const {
  HEARTH_CHECK(numel() == 1, ValueError, "[item] a tensor with ", numel(),
               " elements cannot be converted to a scalar (expected exactly one element)");
  Tensor host = transfer(*this, Device());
  return visit_dtype(dtype(), [&](auto tag) -> Scalar {
    using T = typename decltype(tag)::type;
    return Scalar(*static_cast<const T*>(host.data_ptr()));
  });
}

template <typename T>
std::vector<T> Tensor::to_vector() const {
  Tensor host = transfer(dtype() == dtype_of_v<T> ? *this : cast(detach(), dtype_of_v<T>), Device());
  const T* p = static_cast<const T*>(host.data_ptr());
  return std::vector<T>(p, p + host.numel());
}
template std::vector<float> Tensor::to_vector() const;
template std::vector<double> Tensor::to_vector() const;
template std::vector<int64_t> Tensor::to_vector() const;
template std::vector<int32_t> Tensor::to_vector() const;
template std::vector<uint8_t> Tensor::to_vector() const;
template std::vector<BFloat16> Tensor::to_vector() const;
template std::vector<Half> Tensor::to_vector() const;
template <>
std::vector<bool> Tensor::to_vector() const {
  std::vector<uint8_t> bytes = cast(detach(), DType::bool_).to_vector<uint8_t>();
  return std::vector<bool>(bytes.begin(), bytes.end());
}

Tensor Tensor::view(const Shape& s) const { return hearth::view(*this, s); }
Tensor Tensor::reshape(const Shape& s) const { return hearth::reshape(*this, s); }
Tensor Tensor::transpose(int64_t d0, int64_t d1) const { return hearth::transpose(*this, d0, d1); }
Tensor Tensor::t() const {
  HEARTH_CHECK(dim() <= 2, ShapeError, "[t] expects a tensor with <= 2 dimensions, got shape ", shape_string());
  return dim() < 2 ? *this : hearth::transpose(*this, 0, 1);
}
Tensor Tensor::permute(const std::vector<int64_t>& dims) const { return hearth::permute(*this, dims); }
Tensor Tensor::narrow(int64_t d, int64_t start, int64_t length) const {
  return hearth::narrow(*this, d, start, length);
}
Tensor Tensor::select(int64_t d, int64_t index) const { return hearth::select(*this, d, index); }
Tensor Tensor::expand(const Shape& s) const { return hearth::expand(*this, s); }
Tensor Tensor::squeeze(int64_t d) const { return hearth::squeeze(*this, d); }
Tensor Tensor::squeeze() const { return hearth::squeeze(*this); }
Tensor Tensor::unsqueeze(int64_t d) const { return hearth::unsqueeze(*this, d); }
Tensor Tensor::flatten(int64_t s, int64_t e) const { return hearth::flatten(*this, s, e); }

Tensor Tensor::sum() const { return hearth::sum(*this); }
Tensor Tensor::sum(const std::vector<int64_t>& dims, bool keepdim) const { return hearth::sum(*this, dims, keepdim); }
Tensor Tensor::mean() const { return hearth::mean(*this); }
Tensor Tensor::mean(const std::vector<int64_t>& dims, bool keepdim) const { return hearth::mean(*this, dims, keepdim); }

const Tensor& Tensor::fill_(const Scalar& value) const { return hearth::fill_(*this, value); }
const Tensor& Tensor::zero_() const { return hearth::zero_(*this); }
const Tensor& Tensor::copy_(const Tensor& src) const { return hearth::copy_(*this, src); }
const Tensor& Tensor::add_(const Tensor& other, const Scalar& alpha) const { return hearth::add_(*this, other, alpha); }
const Tensor& Tensor::mul_(const Scalar& value) const { return hearth::mul_(*this, value); }

Tensor operator+(const Tensor& a, const Tensor& b) { return add(a, b); }
Tensor operator-(const Tensor& a, const Tensor& b) { return sub(a, b); }
Tensor operator*(const Tensor& a, const Tensor& b) { return mul(a, b); }
Tensor operator/(const Tensor& a, const Tensor& b) { return div(a, b); }
Tensor operator+(const Tensor& a, const Scalar& b) { return add(a, b); }
Tensor operator-(const Tensor& a, const Scalar& b) { return sub(a, b); }
Tensor operator*(const Tensor& a, const Scalar& b) { return mul(a, b); }
Tensor operator/(const Tensor& a, const Scalar& b) { return div(a, b); }
Tensor operator+(const Scalar& a, const Tensor& b) { return add(b, a); }
Tensor operator-(const Scalar& a, const Tensor& b) { return rsub(b, a); }
Tensor operator*(const Scalar& a, const Tensor& b) { return mul(b, a); }
Tensor operator/(const Scalar& a, const Tensor& b) { return div(scalar_tensor(a, result_type(b, a), b.device()), b); }
Tensor operator-(const Tensor& a) { return neg(a); }

}  // namespace hearth
