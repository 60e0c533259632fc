// Tensor: a cheap handle to shared storage plus a view (dtype, shape, strides,
// offset). Copying a Tensor copies the handle; views share bytes.
//
// The metadata methods are defined in core. The autograd methods are defined in
// hearth/autograd/ and the math methods in hearth/ops/tensor_methods.cpp: they are
// declared here so users write `x.sum()` as in PyTorch.
#pragma once

#include <cstdint>
#include <initializer_list>
#include <iosfwd>
#include <memory>
#include <string>
#include <vector>

#include "hearth/core/device.h"
#include "hearth/core/dtype.h"
#include "hearth/core/scalar.h"
#include "hearth/core/shape.h"
#include "hearth/core/storage.h"

namespace hearth {

namespace autograd {
struct AutogradMeta;
class Node;
}  // namespace autograd

struct TensorImpl {
  std::shared_ptr<Storage> storage;
  DType dtype = DType::float32;
  Shape shape;
  Strides strides;
  int64_t offset = 0;  // in elements
  std::shared_ptr<autograd::AutogradMeta> autograd;
};

class Tensor {
 public:
  Tensor() = default;
  explicit Tensor(std::shared_ptr<TensorImpl> impl) : impl_(std::move(impl)) {}

  // A tensor over existing storage with an explicit layout (no checks beyond bounds).
  static Tensor from_storage(std::shared_ptr<Storage> storage, DType dtype, Shape shape, Strides strides,
                             int64_t offset);
  // Uninitialised contiguous memory on `device`.
  static Tensor empty(const Shape& shape, DType dtype = DType::float32, Device device = Device());

  bool defined() const { return impl_ != nullptr; }
  DType dtype() const { return impl_->dtype; }
  Device device() const { return impl_->storage->device(); }
  const Shape& shape() const { return impl_->shape; }
  const Strides& strides() const { return impl_->strides; }
  int64_t offset() const { return impl_->offset; }
  int64_t dim() const { return static_cast<int64_t>(impl_->shape.size()); }
  int64_t size(int64_t d) const;
  int64_t stride(int64_t d) const;
  int64_t numel() const { return numel_of(impl_->shape); }
  size_t element_size() const { return itemsize(impl_->dtype); }
  size_t nbytes() const { return static_cast<size_t>(numel()) * element_size(); }
  bool is_contiguous() const { return is_contiguous_layout(impl_->shape, impl_->strides); }
  bool is_floating_point() const { return is_floating(impl_->dtype); }

  // Pointer to the first element (storage base + offset).
  void* data_ptr() const;
  template <typename T>
  T* data() const {
    check_dtype_for_access(dtype_of_v<T>);
    return static_cast<T*>(data_ptr());
  }

  const std::shared_ptr<Storage>& storage() const { return impl_->storage; }
  const std::shared_ptr<TensorImpl>& impl() const { return impl_; }
  bool is_same(const Tensor& o) const { return impl_ == o.impl_; }
  // A view with new metadata over the same storage; autograd-free (the ops
  // layer wires view autograd). Checks that the view stays inside the storage.
  Tensor as_strided_view(const Shape& shape, const Strides& strides, int64_t offset) const;

  uint32_t version() const { return impl_->storage->version(); }
  void bump_version() const { impl_->storage->bump_version(); }

  std::string shape_string() const { return shape_str(shape()); }
  std::string to_string() const;  // PyTorch-like printout (hearth/ops/print.cpp)

  // ---- autograd (hearth/autograd/tensor_autograd.cpp) ----
  bool requires_grad() const;
  const Tensor& requires_grad_(bool value = true) const;
  Tensor grad() const;
  void set_grad(const Tensor& g) const;
  const Tensor& zero_grad_(bool set_to_none = true) const;
  bool is_leaf() const;
  std::shared_ptr<autograd::Node> grad_fn() const;
  // Gradient of the graph that produced this tensor. `gradient` is required for
  // non-scalar outputs (the vector in the vector-Jacobian product).
  void backward(const Tensor& gradient = Tensor(), bool retain_graph = false) const;
  // Same data, cut from the graph.
  Tensor detach() const;
  autograd::AutogradMeta* autograd_meta() const { return impl_->autograd.get(); }
  autograd::AutogradMeta& ensure_autograd_meta() const;

  // ---- math and views (hearth/ops/tensor_methods.cpp) ----
  Tensor to(Device device) const;
  Tensor to(DType dtype) const;
  Tensor to(Device device, DType dtype) const;
  Tensor cpu() const { return to(Device()); }
  // A dense copy in page-locked host memory (torch's pin_memory): copies from
  // it to an accelerator return at once and overlap with compute. CPU tensors
  // only; itself when already pinned; ordinary memory where no accelerator is.
  Tensor pin_memory() const;
  bool is_pinned() const;
  Tensor contiguous() const;
  Tensor clone() const;
  Scalar item() const;
  template <typename T>
  T item() const {
    return item().to<T>();
  }
  template <typename T>
  std::vector<T> to_vector() const;

  Tensor view(const Shape& shape) const;
  Tensor reshape(const Shape& shape) const;
  Tensor transpose(int64_t d0, int64_t d1) const;
  Tensor t() const;  // 2-D transpose
  Tensor permute(const std::vector<int64_t>& dims) const;
  Tensor narrow(int64_t dim, int64_t start, int64_t length) const;
  Tensor select(int64_t dim, int64_t index) const;
  Tensor expand(const Shape& shape) const;
  Tensor squeeze(int64_t dim) const;
  Tensor squeeze() const;
  Tensor unsqueeze(int64_t dim) const;
  Tensor flatten(int64_t start_dim = 0, int64_t end_dim = -1) const;

  Tensor sum() const;
  Tensor sum(const std::vector<int64_t>& dims, bool keepdim = false) const;
  Tensor mean() const;
  Tensor mean(const std::vector<int64_t>& dims, bool keepdim = false) const;
  Tensor max() const;
  Tensor min() const;
  Tensor argmax(int64_t dim, bool keepdim = false) const;
  Tensor matmul(const Tensor& other) const;
  Tensor pow(const Scalar& exponent) const;
  Tensor exp() const;
  Tensor log() const;
  Tensor sqrt() const;
  Tensor abs() const;
  Tensor relu() const;

  // In place (they bump the version counter).
  const Tensor& fill_(const Scalar& value) const;
  const Tensor& zero_() const;
  const Tensor& copy_(const Tensor& src) const;
  const Tensor& add_(const Tensor& other, const Scalar& alpha = 1) const;
  const Tensor& mul_(const Scalar& value) const;

 private:
  void check_dtype_for_access(DType requested) const;
  std::shared_ptr<TensorImpl> impl_;
};

// Arithmetic operators (hearth/ops/tensor_methods.cpp).
Tensor operator+(const Tensor& a, const Tensor& b);
Tensor operator-(const Tensor& a, const Tensor& b);
Tensor operator*(const Tensor& a, const Tensor& b);
Tensor operator/(const Tensor& a, const Tensor& b);
Tensor operator+(const Tensor& a, const Scalar& b);
Tensor operator-(const Tensor& a, const Scalar& b);
Tensor operator*(const Tensor& a, const Scalar& b);
Tensor operator/(const Tensor& a, const Scalar& b);
Tensor operator+(const Scalar& a, const Tensor& b);
Tensor operator-(const Scalar& a, const Tensor& b);
Tensor operator*(const Scalar& a, const Tensor& b);
Tensor operator/(const Scalar& a, const Tensor& b);
Tensor operator-(const Tensor& a);

std::ostream& operator<<(std::ostream& os, const Tensor& t);

}  // namespace hearth
