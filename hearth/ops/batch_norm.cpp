// batch_norm: per-channel normalisation of [N, C, *] inputs, with running
// statistics updated in place while training; batch_norm_relu and
// batch_norm_add_relu fuse the ReLU (and the residual add before it) that
// follow most batch norms into the same kernels.
#include "hearth/dispatch/schemas/batch_norm.h"

#include "hearth/autograd/function.h"
#include "hearth/autograd/grad_mode.h"
#include "hearth/ops/composition.h"
#include "hearth/ops/elementwise.h"
#include "hearth/ops/nn_functional.h"
#include "hearth/ops/nn_util.h"
#include "hearth/ops/op_utils.h"
#include "hearth/ops/view.h"

namespace hearth {
namespace {

using autograd::BackwardContext;
using autograd::SavedTensor;

// The kernel writes running statistics in place and needs them dense; a strided
// one is updated through a dense copy that is written back afterwards.
struct RunningStat {
  Tensor user;
  Tensor arg;
  explicit RunningStat(const Tensor& t) : user(t), arg(t.defined() && !t.is_contiguous() ? t.detach().clone() : t) {}
  void finish(bool written) const {
    if (!written || !user.defined()) return;
    if (arg.is_same(user)) {
      user.bump_version();
    } else {
      NoGradGuard no_grad;
      copy_(user, arg);
    }
  }
};

// The [N, C, S] matrix the kernels take, over an image's memory. An NCHW input
// is viewed as [N, C, H*W]; a channels_last one as [N*H*W, C, 1] (its memory is
// exactly those rows), so NHWC stays NHWC without a transpose.
struct KernelLayout {
  bool channels_last;
  Shape shape;  // the logical input shape
  Shape rows;   // the kernels' [N', C, S]

  explicit KernelLayout(const Tensor& x) : channels_last(x.suggest_memory_format() == MemoryFormat::channels_last) {
    shape = x.shape();
    int64_t s = 1;
    for (int64_t d = 2; d < x.dim(); ++d) s *= x.size(d);
    rows = channels_last ? Shape{x.size(0) * s, x.size(1), 1} : Shape{x.size(0), x.size(1), s};
  }
  MemoryFormat format() const { return channels_last ? MemoryFormat::channels_last : MemoryFormat::contiguous; }
  // A detached dense tensor of `shape` in this layout, as the kernels' matrix.
  Tensor matrix(const Tensor& t) const {
    Tensor dense = channels_last ? contiguous(t.detach(), MemoryFormat::channels_last) : detail::dense_detached(t);
    return dense.as_strided_view(rows, contiguous_strides(rows), dense.offset());
  }
  Tensor empty(DType dtype, Device device) const { return Tensor::empty(shape, dtype, device, format()); }
  Tensor matrix_of_empty(const Tensor& t) const {
    return t.as_strided_view(rows, contiguous_strides(rows), t.offset());
  }
};

// The residual as the kernels add it: x's dtype (a differentiable cast where it
// differs, so its gradient flows back in the caller's dtype), checked against x.
Tensor residual_operand(const char* name, const Tensor& residual, const Tensor& x) {
  if (!residual.defined()) return residual;
  detail::check_floating(name, residual, "residual");
  HEARTH_CHECK(residual.shape() == x.shape(), ShapeError, "[", name, "] expected a residual of the input's shape ",
               x.shape_string(), ", got ", residual.shape_string());
  HEARTH_CHECK(residual.device() == x.device(), DeviceError, "[", name, "] expected the residual on ", x.device().str(),
               " with the input, got ", residual.device().str());
  return residual.dtype() == x.dtype() ? residual : cast(residual, x.dtype());
}

// The step counter a training call increments in its own kernel: one int64
// element on x's device.
void check_step_counter(const char* name, const Tensor& counter, const Tensor& x) {
  if (!counter.defined()) return;
  HEARTH_CHECK(counter.dtype() == DType::int64 && counter.numel() == 1, TypeError, "[", name,
               "] num_batches_tracked must be a one-element int64 tensor, got ", dtype_name(counter.dtype()), " of shape ",
               counter.shape_string());
  HEARTH_CHECK(counter.device() == x.device(), DeviceError, "[", name, "] expected num_batches_tracked on ",
               x.device().str(), " with the input, got ", counter.device().str());
  detail::check_inplace_allowed(name, counter);
}

// residual (only with relu): y = relu(batch_norm(x) + residual).
Tensor batch_norm_impl(const char* name, const Tensor& x, const Tensor& running_mean, const Tensor& running_var,
                       const Tensor& weight, const Tensor& bias, bool training, double momentum, double eps, bool relu,
                       const Tensor& residual, const Tensor& num_batches_tracked) {
  // The fused forms are ops of their own (one kernel each backend registers
  // for all three, reading the ReLU from the attributes).
  static OpHandle plain_op = detail::op_handle(OpId::batch_norm);
  static OpHandle relu_op = detail::op_handle(OpId::batch_norm_relu);
  static OpHandle add_relu_op = detail::op_handle(OpId::batch_norm_add_relu);
  static OpHandle bw_op = detail::op_handle(OpId::batch_norm_backward);
  detail::check_floating(name, x, "input");
  HEARTH_CHECK(x.dim() >= 2, ShapeError, "[", name, "] expected an input of shape [N, C, *] with at least 2 dims, got ",
               x.shape_string());
  const int64_t N = x.size(0), C = x.size(1);
  int64_t S = 1;
  for (int64_t d = 2; d < x.dim(); ++d) S *= x.size(d);
  detail::check_channel_param(name, running_mean, "running_mean", C, x);
  detail::check_channel_param(name, running_var, "running_var", C, x);
  detail::check_channel_param(name, weight, "weight", C, x);
  detail::check_channel_param(name, bias, "bias", C, x);
  HEARTH_CHECK(training || (running_mean.defined() && running_var.defined()), ValueError, "[", name,
               "] evaluation (training=false) needs running_mean and running_var");
  HEARTH_CHECK(!training || N * S > 1, ValueError, "[", name,
               "] expected more than 1 value per channel when training, got input of shape ", x.shape_string());
  HEARTH_CHECK(eps > 0, ValueError, "[", name, "] eps must be positive, got ", eps);
  if (training) {
    if (running_mean.defined()) detail::check_inplace_allowed(name, running_mean);
    if (running_var.defined()) detail::check_inplace_allowed(name, running_var);
    check_step_counter(name, num_batches_tracked, x);
  }

  const Tensor res = residual_operand(name, residual, x);
  const OpHandle op = res.defined() ? add_relu_op : relu ? relu_op : plain_op;

  const DType acc = detail::acc_dtype(x.dtype());
  const Device dev = x.device();
  const KernelLayout layout(x);
  Tensor x3 = layout.matrix(x);
  Tensor y = layout.empty(x.dtype(), dev);
  Tensor mean = Tensor::empty({C}, acc, dev), invstd = Tensor::empty({C}, acc, dev);
  // The forward's affine map, kept for the ReLU's mask in backward (kernels
  // may recompute the mask from it and x instead of reading the output).
  const bool keep_affine = relu && !res.defined() && autograd::any_requires_grad({x, weight, bias});
  Tensor affine = keep_affine ? Tensor::empty({2, C}, acc, dev) : Tensor();
  RunningStat rm(running_mean), rv(running_var), counter(training ? num_batches_tracked : Tensor());
  const BatchNormAttrs attrs{training, momentum, eps, relu};
  if (C > 0) {
    detail::run(op,
                {x3, rm.arg, rv.arg, detail::dense_detached(weight), detail::dense_detached(bias),
                 res.defined() ? layout.matrix(res) : Tensor(), counter.arg},
                {layout.matrix_of_empty(y), mean, invstd, affine}, attrs);
  } else if (counter.arg.defined()) {
    NoGradGuard no_grad;
    copy_(counter.arg, add(counter.arg, 1));  // no kernel ran to count the batch
  }
  rm.finish(training && C > 0);
  rv.finish(training && C > 0);
  counter.finish(training);

  if (autograd::any_requires_grad({x, weight, bias, res})) {
    // The fused ReLU's mask comes from the output, saved as the kernels' matrix.
    const SavedTensor sy = relu ? SavedTensor(layout.matrix_of_empty(y)) : SavedTensor();
    // A device with the fused forward masks the gradient in its backward
    // kernel (batch_norm_backward's relu operands); one that composed the
    // forward gets relu_backward and the plain backward, primitives alone.
    const bool masks_in_kernel = relu && supports(op, dev.kind, x.dtype());
    const char* node = res.defined() ? "BatchNormAddReluBackward"
                       : relu        ? "BatchNormReluBackward"
                                     : "BatchNormBackward";
    autograd::record(node, {x, weight, bias, res}, {y},
                     [sx = SavedTensor(x3), sw = SavedTensor(weight), sy, mean, invstd, affine, attrs, layout,
                      masks_in_kernel, wdt = weight.defined() ? weight.dtype() : acc,
                      bdt = bias.defined() ? bias.dtype() : acc](const BackwardContext& c) {
                       Tensor xs = sx.unpack(c.name());
                       Tensor w = detail::dense_detached(sw.unpack(c.name()));
                       const Shape& s3 = xs.shape();
                       Tensor g =
                           layout.matrix(c.grad(0).dtype() == xs.dtype() ? c.grad(0) : cast(c.grad(0), xs.dtype()));
                       Tensor gx = c.needs(0) ? layout.empty(xs.dtype(), xs.device()) : Tensor();
                       Tensor gw = c.needs(1) ? Tensor::empty({s3[1]}, wdt, xs.device()) : Tensor();
                       Tensor gb = c.needs(2) ? Tensor::empty({s3[1]}, bdt, xs.device()) : Tensor();
                       // The residual's gradient is grad_y masked by the ReLU, written
                       // by the backward kernels on their way.
                       Tensor gr = c.needs(3) ? layout.empty(xs.dtype(), xs.device()) : Tensor();
                       const Tensor ysaved = attrs.relu ? sy.unpack(c.name()) : Tensor();
                       auto matrix_or_none = [&](const Tensor& t) {
                         return t.defined() ? layout.matrix_of_empty(t) : t;
                       };
                       if (attrs.relu && !masks_in_kernel) {
                         // The ReLU's mask first, then the plain backward; the
                         // residual's gradient is the masked gradient itself.
                         g = contiguous(relu_backward(g, ysaved));
                         if (gr.defined()) copy_(matrix_or_none(gr), g);
                         BatchNormAttrs plain = attrs;
                         plain.relu = false;
                         if (s3[1] > 0)
                           detail::run(bw_op, {g, xs, mean, invstd, w, Tensor(), Tensor()},
                                       {matrix_or_none(gx), gw, gb, Tensor()}, plain);
                         return std::vector<Tensor>{gx, gw, gb, gr};
                       }
                       if (s3[1] > 0)
                         detail::run(bw_op,
                                     {g, xs, mean, invstd, w, ysaved, affine},
                                     {matrix_or_none(gx), gw, gb, matrix_or_none(gr)}, attrs);
                       return std::vector<Tensor>{gx, gw, gb, gr};
                     });
  }
  return y;
}

}  // namespace

Tensor batch_norm(const Tensor& x, const Tensor& running_mean, const Tensor& running_var, const Tensor& weight,
                  const Tensor& bias, bool training, double momentum, double eps, const Tensor& num_batches_tracked) {
  return batch_norm_impl("batch_norm", x, running_mean, running_var, weight, bias, training, momentum, eps, false,
                         Tensor(), num_batches_tracked);
}

Tensor batch_norm_relu(const Tensor& x, const Tensor& running_mean, const Tensor& running_var, const Tensor& weight,
                       const Tensor& bias, bool training, double momentum, double eps,
                       const Tensor& num_batches_tracked) {
  return batch_norm_impl("batch_norm_relu", x, running_mean, running_var, weight, bias, training, momentum, eps, true,
                         Tensor(), num_batches_tracked);
}

Tensor batch_norm_add_relu(const Tensor& x, const Tensor& residual, const Tensor& running_mean,
                           const Tensor& running_var, const Tensor& weight, const Tensor& bias, bool training,
                           double momentum, double eps, const Tensor& num_batches_tracked) {
  detail::check_defined("batch_norm_add_relu", residual, "residual");
  return batch_norm_impl("batch_norm_add_relu", x, running_mean, running_var, weight, bias, training, momentum, eps,
                         true, residual, num_batches_tracked);
}

// The compositions of batch_norm_relu and batch_norm_add_relu (the operands
// of hearth/dispatch/schemas/batch_norm.h): the plain batch norm writes the
// output, the statistics, the affine map and the running statistics; then
// the residual and the ReLU, rounded as relu(add(batch_norm(x), residual)).
namespace {

void compose_batch_norm_relu(OpCall& call) {
  static OpHandle plain_op = detail::op_handle(OpId::batch_norm);
  detail::CompositionScope scope;
  BatchNormAttrs plain = call.attrs<BatchNormAttrs>();
  plain.relu = false;
  std::vector<Tensor> inputs = call.inputs;
  const Tensor residual = inputs.size() > 5 ? inputs[5] : Tensor();
  if (inputs.size() > 5) inputs[5] = Tensor();
  const Tensor& y = call.out(0);
  detail::run(plain_op, std::move(inputs), call.outputs, plain);
  copy_(y, relu(residual.defined() ? add(y, residual) : y));
}

HEARTH_REGISTER_COMPOSITION(batch_norm_relu, compose_batch_norm_relu);
HEARTH_REGISTER_COMPOSITION(batch_norm_add_relu, compose_batch_norm_relu);

}  // namespace

}  // namespace hearth
