#include "hearth/nn/batchnorm.h"

#include <sstream>

#include "hearth/autograd/grad_mode.h"
#include "hearth/nn/init.h"
#include "hearth/ops/elementwise.h"
#include "hearth/ops/factory.h"
#include "hearth/ops/nn_functional.h"

namespace hearth::nn {

BatchNorm::BatchNorm(const char* type_name, int64_t num_features, double eps, std::optional<double> momentum,
                     bool affine, bool track_running_stats)
    : Module(type_name),
      num_features(num_features),
      eps(eps),
      momentum(momentum),
      affine(affine),
      track_running_stats(track_running_stats) {
  HEARTH_CHECK(num_features > 0, ValueError, "[", type_name, "] num_features must be positive, got ", num_features);
  HEARTH_CHECK(eps > 0, ValueError, "[", type_name, "] eps must be positive, got ", eps);
  if (affine) {
    weight = register_parameter("weight", ones({num_features}));
    bias = register_parameter("bias", zeros({num_features}));
  }
  if (track_running_stats) {
    running_mean = register_buffer("running_mean", zeros({num_features}));
    running_var = register_buffer("running_var", ones({num_features}));
    num_batches_tracked = register_buffer("num_batches_tracked", zeros({}, DType::int64));
  }
}

void BatchNorm::reset_running_stats() {
  if (!track_running_stats) return;
  NoGradGuard no_grad;
  zero_(running_mean);
  fill_(running_var, 1);
  zero_(num_batches_tracked);
}

void BatchNorm::reset_parameters() {
  reset_running_stats();
  if (affine) {
    init::ones_(weight);
    init::zeros_(bias);
  }
}

Tensor BatchNorm::forward(const Tensor& x) { return normalize(x, false, Tensor()); }

Tensor BatchNorm::forward_relu(const Tensor& x) { return normalize(x, true, Tensor()); }

Tensor BatchNorm::forward_add_relu(const Tensor& x, const Tensor& residual) {
  HEARTH_CHECK(residual.defined(), ValueError, "[", type_name(), "] forward_add_relu needs a residual tensor");
  return normalize(x, true, residual);
}

Tensor BatchNorm::normalize(const Tensor& x, bool relu, const Tensor& residual) {
  check_input(x);
  HEARTH_CHECK(x.size(1) == num_features, ShapeError, "[", type_name(), "] expected ", num_features,
               " channels (dim 1), got input of shape ", x.shape_string());
  double factor = momentum.value_or(0.0);
  // With a momentum the batch norm's kernels count the batch themselves; the
  // cumulative average (momentum None) needs the new count on the host first.
  Tensor counter;
  if (is_training() && track_running_stats) {
    if (momentum && num_batches_tracked.device() == x.device()) {
      counter = num_batches_tracked;
    } else {
      NoGradGuard no_grad;
      copy_(num_batches_tracked, add(num_batches_tracked, 1));
      if (!momentum) factor = 1.0 / static_cast<double>(num_batches_tracked.item<int64_t>());
    }
  }
  // Batch statistics while training, and also in eval mode when no running
  // statistics are kept (PyTorch's rule).
  const bool use_batch_stats = is_training() || !track_running_stats;
  const bool update = is_training() && track_running_stats;
  const Tensor rm = update || !use_batch_stats ? running_mean : Tensor();
  const Tensor rv = update || !use_batch_stats ? running_var : Tensor();
  if (residual.defined())
    return batch_norm_add_relu(x, residual, rm, rv, weight, bias, use_batch_stats, factor, eps, counter);
  if (relu) return batch_norm_relu(x, rm, rv, weight, bias, use_batch_stats, factor, eps, counter);
  return batch_norm(x, rm, rv, weight, bias, use_batch_stats, factor, eps, counter);
}

std::string BatchNorm::extra_repr() const {
  std::ostringstream os;
  os << num_features << ", eps=" << eps << ", momentum=";
  if (momentum)
    os << *momentum;
  else
    os << "None";
  os << ", affine=" << (affine ? "true" : "false")
     << ", track_running_stats=" << (track_running_stats ? "true" : "false");
  return os.str();
}

BatchNorm1d::BatchNorm1d(int64_t num_features, double eps, std::optional<double> momentum, bool affine,
                         bool track_running_stats)
    : BatchNorm("BatchNorm1d", num_features, eps, momentum, affine, track_running_stats) {}

void BatchNorm1d::check_input(const Tensor& x) const {
  HEARTH_CHECK(x.defined() && (x.dim() == 2 || x.dim() == 3), ShapeError,
               "[BatchNorm1d] expected a 2-D [N, C] or 3-D [N, C, L] input, got ",
               x.defined() ? "shape " + x.shape_string() : std::string("an undefined tensor"));
}

BatchNorm2d::BatchNorm2d(int64_t num_features, double eps, std::optional<double> momentum, bool affine,
                         bool track_running_stats)
    : BatchNorm("BatchNorm2d", num_features, eps, momentum, affine, track_running_stats) {}

void BatchNorm2d::check_input(const Tensor& x) const {
  HEARTH_CHECK(x.defined() && x.dim() == 4, ShapeError, "[BatchNorm2d] expected a 4-D [N, C, H, W] input, got ",
               x.defined() ? "shape " + x.shape_string() : std::string("an undefined tensor"));
}

}  // namespace hearth::nn
