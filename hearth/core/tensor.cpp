#include "hearth/core/tensor.h"

#include "hearth/core/checked_size.h"
#include "hearth/core/errors.h"
#include "hearth/core/storage.h"

namespace hearth {

Tensor Tensor::from_storage(std::shared_ptr<Storage> storage, DType dtype, Shape shape, Strides strides,
                            int64_t offset) {
  HEARTH_CHECK(shape.size() == strides.size(), ShapeError, "[tensor] shape ", shape_str(shape), " and strides ",
               shape_str(strides), " differ in length");
  auto impl = std::make_shared<TensorImpl>();
  impl->storage = std::move(storage);
  impl->dtype = dtype;
  impl->shape = std::move(shape);
  impl->strides = std::move(strides);
  impl->offset = offset;
  Tensor t(std::move(impl));
  // Bounds: the furthest element reachable must lie inside the storage.
  if (t.numel() > 0) {
    int64_t lo = offset, hi = offset;
    for (size_t i = 0; i < t.shape().size(); ++i) {
      int64_t span = (t.shape()[i] - 1) * t.strides()[i];
      (span >= 0 ? hi : lo) += span;
    }
    int64_t end_bytes = 0;
    const bool wrapped = __builtin_mul_overflow(hi + 1, static_cast<int64_t>(itemsize(dtype)), &end_bytes);
    HEARTH_CHECK(lo >= 0 && !wrapped && static_cast<size_t>(end_bytes) <= t.storage()->nbytes(), ShapeError,
                 "[tensor] view of shape ", shape_str(t.shape()), " with strides ", shape_str(t.strides()),
                 " at offset ", offset, " reaches outside its storage of ", t.storage()->nbytes(), " bytes");
  }
  return t;
}

Tensor Tensor::empty(const Shape& shape, DType dtype, Device device) {
  for (int64_t s : shape) HEARTH_CHECK(s >= 0, ShapeError, "[empty] negative dimension in shape ", shape_str(shape));
  const size_t nbytes = checked_nbytes(shape, itemsize(dtype));
  auto storage = Storage::allocate(nbytes, device);
  return from_storage(std::move(storage), dtype, shape, contiguous_strides(shape), 0);
}

Tensor Tensor::empty(const Shape& shape, DType dtype, Device device, MemoryFormat fmt) {
  Tensor t = empty(shape, dtype, device);
  if (fmt == MemoryFormat::contiguous) return t;
  return t.as_strided_view(shape, strides_for(shape, fmt), 0);
}

bool Tensor::is_pinned() const { return defined() && storage() && storage()->is_pinned(); }

int64_t Tensor::size(int64_t d) const { return impl_->shape[wrap_dim(d, dim(), "size")]; }
int64_t Tensor::stride(int64_t d) const { return impl_->strides[wrap_dim(d, dim(), "stride")]; }

void* Tensor::data_ptr() const {
  HEARTH_CHECK(defined(), ValueError, "[tensor] data_ptr() of an undefined tensor");
  return static_cast<char*>(impl_->storage->data()) + impl_->offset * static_cast<int64_t>(element_size());
}

Tensor Tensor::as_strided_view(const Shape& shape, const Strides& strides, int64_t offset) const {
  return from_storage(impl_->storage, impl_->dtype, shape, strides, offset);
}

void Tensor::check_dtype_for_access(DType requested) const {
  HEARTH_CHECK(defined(), ValueError, "[tensor] data() of an undefined tensor");
  HEARTH_CHECK(requested == dtype(), TypeError, "[tensor] data<", dtype_name(requested), ">() on a tensor of dtype ",
               dtype_name(dtype()));
}

}  // namespace hearth
