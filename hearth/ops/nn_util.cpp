#include "hearth/ops/nn_util.h"

#include "hearth/ops/op_utils.h"
#include "hearth/ops/view.h"

namespace hearth::detail {

void check_channel_param(const char* op, const Tensor& p, const char* arg, int64_t size, const Tensor& x) {
  if (!p.defined()) return;
  HEARTH_CHECK(p.dim() == 1 && p.size(0) == size, ShapeError, "[", op, "] expected '", arg, "' of shape [", size,
               "], got ", p.shape_string());
  check_param_dtype_device(op, p, arg, x);
}

void check_param_dtype_device(const char* op, const Tensor& p, const char* arg, const Tensor& x) {
  if (!p.defined()) return;
  HEARTH_CHECK(p.dtype() == x.dtype() || p.dtype() == acc_dtype(x.dtype()), TypeError, "[", op, "] expected '", arg,
               "' of dtype ", dtype_name(x.dtype()), is_half_type(x.dtype()) ? " or float32" : "",
               " to match the input, got ", dtype_name(p.dtype()));
  HEARTH_CHECK(p.device() == x.device(), DeviceError, "[", op, "] expected all tensors on ", x.device().str(),
               ", but '", arg, "' is on ", p.device().str());
}

Tensor dense_detached(const Tensor& t) {
  if (!t.defined()) return t;
  return contiguous(t.detach());
}

Reduction parse_reduction(const char* op, const std::string& reduction) {
  if (reduction == "mean") return Reduction::mean;
  if (reduction == "sum") return Reduction::sum;
  if (reduction == "none") return Reduction::none;
  HEARTH_THROW(ValueError, "[", op, "] reduction must be \"mean\", \"sum\" or \"none\", got \"", reduction, "\"");
}

}  // namespace hearth::detail
