#include "hearth/nn/conv_batchnorm.h"

#include "hearth/autograd/grad_mode.h"
#include "hearth/core/switch_list.h"
#include "hearth/ops/autocast.h"
#include "hearth/ops/elementwise.h"
#include "hearth/ops/nn_functional.h"
#include "hearth/ops/view.h"

namespace hearth::nn {

bool ConvBatchNormFold::folds(const Conv2d& conv, const BatchNorm& bn) {
  // HEARTH_FOLD_BATCH_NORM=0 keeps the modules apart (to rule the fold's
  // rounding out when comparing outputs, or to time the difference).
  static const bool off = !switches::fold_batch_norm().get();
  return !off && !grad_enabled() && !bn.is_training() && bn.track_running_stats && bn.running_mean.defined() &&
         bn.running_var.defined() && conv.weight.defined() && bn.num_features == conv.out_channels;
}

std::vector<ConvBatchNormFold::Stamp> ConvBatchNormFold::stamps(const Conv2d& conv, const BatchNorm& bn) const {
  std::vector<Stamp> s;
  for (const Tensor* t : {&conv.weight, &conv.bias, &bn.weight, &bn.bias, &bn.running_mean, &bn.running_var})
    s.emplace_back(t->defined() ? t->data_ptr() : nullptr, t->defined() ? t->version() : 0u);
  return s;
}

void ConvBatchNormFold::refold(const Conv2d& conv, const BatchNorm& bn, DType dtype, MemoryFormat format) {
  // In float64 whatever the parameters' dtype: the fold's own rounding then
  // happens once, in the final cast.
  const int64_t o = conv.out_channels;
  const Tensor mean = cast(bn.running_mean, DType::float64), var = cast(bn.running_var, DType::float64);
  Tensor scale = rsqrt(add(var, bn.eps));
  if (bn.weight.defined()) scale = mul(scale, cast(bn.weight, DType::float64));
  Tensor shift = neg(mul(mean, scale));
  if (conv.bias.defined()) shift = add(shift, mul(cast(conv.bias, DType::float64), scale));
  if (bn.bias.defined()) shift = add(shift, cast(bn.bias, DType::float64));
  const Tensor w = mul(cast(conv.weight, DType::float64), scale.view({o, 1, 1, 1}));
  weight_ = contiguous(cast(w, dtype), format);
  bias_ = cast(shift, dtype);
  dtype_ = dtype;
  format_ = format;
  stamps_ = stamps(conv, bn);
  sources_ = {conv.weight, conv.bias, bn.weight, bn.bias, bn.running_mean, bn.running_var};
}

Tensor ConvBatchNormFold::forward(Conv2d& conv, BatchNorm& bn, const Tensor& x, bool relu, const Tensor& residual) {
  if (!folds(conv, bn)) {
    Tensor y = conv.forward(x);
    if (residual.defined()) return bn.forward_add_relu(y, residual);
    return relu ? bn.forward_relu(y) : bn.forward(y);
  }
  // The dtype the convolution computes in: autocast's where it applies.
  const DType dtype =
      autocast_active() && autocast_enabled(x.device().kind) ? autocast_dtype(x.device().kind) : conv.weight.dtype();
  const MemoryFormat format = x.dim() == 4 ? x.suggest_memory_format() : MemoryFormat::contiguous;
  if (!weight_.defined() || dtype != dtype_ || format != format_ || weight_.device() != x.device() ||
      stamps_ != stamps(conv, bn)) {
    AutocastSuspend no_autocast;
    refold(conv, bn, dtype, format);
  }
  if (residual.defined())
    return conv2d_add_relu(x, weight_, bias_, residual, conv.stride, conv.padding, conv.dilation, conv.groups);
  if (relu) return conv2d_relu(x, weight_, bias_, conv.stride, conv.padding, conv.dilation, conv.groups);
  return conv2d(x, weight_, bias_, conv.stride, conv.padding, conv.dilation, conv.groups);
}

}  // namespace hearth::nn
