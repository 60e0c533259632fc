#include "hearth/optim/clip_grad.h"

#include <cmath>

#include "hearth/autograd/grad_mode.h"
#include "hearth/ops/elementwise.h"
#include "hearth/ops/factory.h"
#include "hearth/ops/indexing.h"
#include "hearth/ops/reduction.h"
#include "hearth/optim/functional.h"

namespace hearth::optim {
namespace {

bool one_dtype_and_device(const std::vector<Tensor>& grads) {
  for (const Tensor& g : grads)
    if (g.dtype() != grads[0].dtype() || g.device() != grads[0].device() || !is_floating(g.dtype())) return false;
  return true;
}

}  // namespace

Tensor clip_grad_norm_(const std::vector<Tensor>& params, double max_norm, double norm_type, bool error_if_nonfinite) {
  HEARTH_CHECK(max_norm >= 0, ValueError, "[clip_grad_norm_] max_norm must be non-negative, got ", max_norm);
  HEARTH_CHECK(norm_type > 0, ValueError, "[clip_grad_norm_] norm_type must be positive (or infinity), got ",
               norm_type);
  NoGradGuard no_grad;
  std::vector<Tensor> grads;
  for (const Tensor& p : params)
    if (p.defined() && p.grad().defined()) grads.push_back(p.grad());
  if (grads.empty()) return zeros({}, DType::float32);

  const Device device = grads[0].device();
  // One call where the backend has it (a few kernels for any number of
  // gradients; composed, clipping is two kernels per gradient and one more
  // per step of the norm); error_if_nonfinite must read the norm before
  // anything is scaled, so it takes the composed path.
  if (!error_if_nonfinite && one_dtype_and_device(grads)) {
    bool done = false;
    Tensor total = clip_grad_norm_foreach_(grads, ClipGradNormAttrs{max_norm, norm_type}, &done);
    if (done) return total;
  }
  bool any_double = false;
  for (const Tensor& g : grads) any_double = any_double || g.dtype() == DType::float64;
  const DType acc = any_double ? DType::float64 : DType::float32;
  // Per-tensor norms in the accumulation dtype (half gradients would overflow
  // their own range), then the norm of the norms: the same p-norm overall.
  std::vector<Tensor> norms;
  for (const Tensor& g : grads) {
    HEARTH_CHECK(g.device() == device, DeviceError, "[clip_grad_norm_] gradients are on ", device.str(), " and ",
                 g.device().str(), "; expected one device");
    norms.push_back(norm(g.dtype() == acc ? g : cast(g, acc), norm_type));
  }
  const Tensor total = norm(stack(norms), norm_type);
  if (error_if_nonfinite) {
    const double v = total.item<double>();
    HEARTH_CHECK(std::isfinite(v), ValueError, "[clip_grad_norm_] the total norm of order ", norm_type,
                 " of the gradients is ", v,
                 ", so they cannot be clipped; set error_if_nonfinite=false to clip "
                 "anyway");
  }
  // min(1, max_norm / (total + 1e-6)), applied unconditionally: no host read.
  const Tensor coef = clamp_max(div(full({}, max_norm, acc, device), add(total, 1e-6)), 1.0);
  for (const Tensor& g : grads) {
    mul_(g, g.dtype() == acc ? coef : cast(coef, g.dtype()));
  }
  return total;
}

}  // namespace hearth::optim
