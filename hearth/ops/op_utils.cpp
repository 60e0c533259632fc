#include "hearth/ops/op_utils.h"

#include "hearth/autograd/grad_mode.h"

namespace hearth::detail {

void run(OpHandle op, std::vector<Tensor> inputs, std::vector<Tensor> outputs) {
  OpCall call;
  call.inputs = std::move(inputs);
  call.outputs = std::move(outputs);
  dispatch(op, call);
}

bool accepts(OpHandle op, std::vector<Tensor> inputs, std::vector<Tensor> outputs) {
  OpCall call;
  call.inputs = std::move(inputs);
  call.outputs = std::move(outputs);
  return hearth::accepts(op, common_device(op->def.name.c_str(), call.inputs).kind, call);
}

Tensor empty_like_inputs(const Shape& shape, DType dtype, Device device, const std::vector<Tensor>& inputs) {
  for (const Tensor& t : inputs) {
    if (!t.defined() || t.shape() != shape) continue;
    return Tensor::empty(shape, dtype, device, t.suggest_memory_format());
  }
  return Tensor::empty(shape, dtype, device);
}

void check_defined(const char* op, const Tensor& t, const char* arg) {
  HEARTH_CHECK(t.defined(), ValueError, "[", op, "] argument '", arg, "' is an undefined tensor");
}

void check_floating(const char* op, const Tensor& t, const char* arg) {
  check_defined(op, t, arg);
  HEARTH_CHECK(t.is_floating_point(), TypeError, "[", op, "] expected a floating-point tensor for '", arg, "', got ",
               dtype_name(t.dtype()));
}

void check_dim(const char* op, const Tensor& t, int64_t ndim, const char* arg) {
  check_defined(op, t, arg);
  HEARTH_CHECK(t.dim() == ndim, ShapeError, "[", op, "] expected '", arg, "' to have ", ndim, " dimensions, got shape ",
               t.shape_string());
}

void check_same_dtype(const char* op, const Tensor& a, const Tensor& b) {
  HEARTH_CHECK(a.dtype() == b.dtype(), TypeError, "[", op, "] expected tensors of the same dtype, got ",
               dtype_name(a.dtype()), " and ", dtype_name(b.dtype()));
}

void check_inplace_allowed(const char* op, const Tensor& t) {
  HEARTH_CHECK(!(grad_enabled() && t.requires_grad() && t.is_leaf()), AutogradError, "[", op,
               "] a leaf tensor that requires grad is being used in an in-place operation; wrap it in NoGradGuard "
               "(as optimizers do) or use the out-of-place op");
}

}  // namespace hearth::detail
