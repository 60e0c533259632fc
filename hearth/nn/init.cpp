#include "hearth/nn/init.h"

#include <cmath>
#include <limits>
#include <vector>

#include "hearth/autograd/grad_mode.h"
#include "hearth/core/errors.h"
#include "hearth/ops/elementwise.h"
#include "hearth/ops/factory.h"

namespace hearth::nn::init {
namespace {

thread_local int skip_init_depth = 0;

void check_target(const char* fn, const Tensor& t) {
  HEARTH_CHECK(t.defined(), ValueError, "[", fn, "] expected a defined tensor");
  HEARTH_CHECK(t.is_floating_point(), TypeError, "[", fn, "] expected a floating-point tensor, got ",
               dtype_name(t.dtype()));
}

int64_t fan_for(const Tensor& t, const std::string& mode, const char* fn) {
  HEARTH_CHECK(mode == "fan_in" || mode == "fan_out", ValueError, "[", fn,
               "] mode must be \"fan_in\" or \"fan_out\", got \"", mode, "\"");
  auto [fan_in, fan_out] = calculate_fan_in_and_fan_out(t);
  return mode == "fan_in" ? fan_in : fan_out;
}


double normal_cdf(double x) { return 0.5 * std::erfc(-x / std::sqrt(2.0)); }

// Inverse of the standard normal CDF for p in (0, 1): a rational first guess
// (Acklam's coefficients, relative error ~1e-9), polished by one Halley step
// against erfc, which brings it to double precision.
double normal_icdf(double p) {
  static const double a[] = {-3.969683028665376e+01, 2.209460984245205e+02,  -2.759285104469687e+02,
                             1.383577518672690e+02,  -3.066479806614716e+01, 2.506628277459239e+00};
  static const double b[] = {-5.447609879822406e+01, 1.615858368580409e+02, -1.556989798598866e+02,
                             6.680131188771972e+01, -1.328068155288572e+01};
  static const double c[] = {-7.784894002430293e-03, -3.223964580411365e-01, -2.400758277161838e+00,
                             -2.549732539343734e+00, 4.374664141464968e+00,  2.938163982698783e+00};
  static const double d[] = {7.784695709041462e-03, 3.224671290700398e-01, 2.445134137142996e+00,
                             3.754408661907416e+00};
  if (p <= 0) return -std::numeric_limits<double>::infinity();
  if (p >= 1) return std::numeric_limits<double>::infinity();
  const double lo = 0.02425;
  double x;
  if (p < lo) {
    const double q = std::sqrt(-2 * std::log(p));
    x = (((((c[0] * q + c[1]) * q + c[2]) * q + c[3]) * q + c[4]) * q + c[5]) /
        ((((d[0] * q + d[1]) * q + d[2]) * q + d[3]) * q + 1);
  } else if (p <= 1 - lo) {
    const double q = p - 0.5, r = q * q;
    x = (((((a[0] * r + a[1]) * r + a[2]) * r + a[3]) * r + a[4]) * r + a[5]) * q /
        (((((b[0] * r + b[1]) * r + b[2]) * r + b[3]) * r + b[4]) * r + 1);
  } else {
    const double q = std::sqrt(-2 * std::log1p(-p));
    x = -(((((c[0] * q + c[1]) * q + c[2]) * q + c[3]) * q + c[4]) * q + c[5]) /
        ((((d[0] * q + d[1]) * q + d[2]) * q + d[3]) * q + 1);
  }
  const double e = normal_cdf(x) - p;
  const double u = e * std::sqrt(2 * M_PI) * std::exp(x * x / 2);
  return x - u / (1 + x * u / 2);
}

}  // namespace

SkipInitGuard::SkipInitGuard() { ++skip_init_depth; }
SkipInitGuard::~SkipInitGuard() { --skip_init_depth; }
bool random_init_skipped() { return skip_init_depth > 0; }

double calculate_gain(const std::string& nonlinearity, std::optional<double> param) {
  if (nonlinearity == "linear" || nonlinearity == "conv1d" || nonlinearity == "conv2d" || nonlinearity == "conv3d" ||
      nonlinearity == "conv_transpose1d" || nonlinearity == "conv_transpose2d" || nonlinearity == "conv_transpose3d" ||
      nonlinearity == "sigmoid")
    return 1.0;
  if (nonlinearity == "tanh") return 5.0 / 3.0;
  if (nonlinearity == "relu") return std::sqrt(2.0);
  if (nonlinearity == "leaky_relu") {
    const double slope = param.value_or(0.01);
    return std::sqrt(2.0 / (1.0 + slope * slope));
  }
  if (nonlinearity == "selu") return 3.0 / 4.0;
  HEARTH_THROW(ValueError, "[calculate_gain] unsupported nonlinearity \"", nonlinearity,
               "\" (expected linear, conv1d, conv2d, conv3d, sigmoid, tanh, relu, leaky_relu or selu)");
}

std::pair<int64_t, int64_t> calculate_fan_in_and_fan_out(const Tensor& t) {
  HEARTH_CHECK(t.defined(), ValueError, "[calculate_fan_in_and_fan_out] expected a defined tensor");
  HEARTH_CHECK(t.dim() >= 2, ShapeError,
               "[calculate_fan_in_and_fan_out] fan in and fan out need a tensor with at least 2 dimensions, got shape ",
               t.shape_string());
  int64_t receptive = 1;
  for (int64_t d = 2; d < t.dim(); ++d) receptive *= t.size(d);
  return {t.size(1) * receptive, t.size(0) * receptive};
}


const Tensor& uniform_(const Tensor& t, double a, double b) {
  check_target("uniform_", t);
  HEARTH_CHECK(a <= b, ValueError, "[uniform_] expected a <= b, got a=", a, " b=", b);
  if (random_init_skipped()) return zeros_(t);
  NoGradGuard no_grad;
  return ::hearth::uniform_(t, a, b);
}

const Tensor& normal_(const Tensor& t, double mean, double std) {
  check_target("normal_", t);
  if (random_init_skipped()) return zeros_(t);
  NoGradGuard no_grad;
  return ::hearth::normal_(t, mean, std);
}

const Tensor& trunc_normal_(const Tensor& t, double mean, double std, double a, double b) {
  check_target("trunc_normal_", t);
  HEARTH_CHECK(std > 0, ValueError, "[trunc_normal_] std must be positive, got ", std);
  HEARTH_CHECK(a < b, ValueError, "[trunc_normal_] expected a < b, got a=", a, " b=", b);
  if (t.numel() == 0) return t;
  if (random_init_skipped()) return zeros_(t);
  NoGradGuard no_grad;
  const double lo = normal_cdf((a - mean) / std), hi = normal_cdf((b - mean) / std);
  // The uniform draw happens on t's device (the Philox stream every device
  // shares); the inverse CDF, which no op provides, runs on the host.
  Tensor u = empty(t.shape(), DType::float64, t.device());
  ::hearth::uniform_(u, 0.0, 1.0);
  std::vector<double> v = u.to_vector<double>();
  for (double& x : v) {
    const double z = mean + std * normal_icdf(lo + x * (hi - lo));
    x = std::min(std::max(z, a), b);
  }
  copy_(t, tensor(v, t.shape(), t.device()));
  return t;
}

const Tensor& constant_(const Tensor& t, double value) {
  check_target("constant_", t);
  NoGradGuard no_grad;
  return fill_(t, value);
}

const Tensor& zeros_(const Tensor& t) { return constant_(t, 0.0); }
const Tensor& ones_(const Tensor& t) { return constant_(t, 1.0); }

const Tensor& kaiming_uniform_(const Tensor& t, double a, const std::string& mode, const std::string& nonlinearity) {
  check_target("kaiming_uniform_", t);
  if (t.numel() == 0) return t;
  const double fan = static_cast<double>(fan_for(t, mode, "kaiming_uniform_"));
  const double bound = std::sqrt(3.0) * calculate_gain(nonlinearity, a) / std::sqrt(fan);
  return init::uniform_(t, -bound, bound);
}

const Tensor& kaiming_normal_(const Tensor& t, double a, const std::string& mode, const std::string& nonlinearity) {
  check_target("kaiming_normal_", t);
  if (t.numel() == 0) return t;
  const double fan = static_cast<double>(fan_for(t, mode, "kaiming_normal_"));
  return init::normal_(t, 0.0, calculate_gain(nonlinearity, a) / std::sqrt(fan));
}

const Tensor& xavier_uniform_(const Tensor& t, double gain) {
  check_target("xavier_uniform_", t);
  if (t.numel() == 0) return t;
  auto [fan_in, fan_out] = calculate_fan_in_and_fan_out(t);
  const double bound = std::sqrt(3.0) * gain * std::sqrt(2.0 / static_cast<double>(fan_in + fan_out));
  return init::uniform_(t, -bound, bound);
}

const Tensor& xavier_normal_(const Tensor& t, double gain) {
  check_target("xavier_normal_", t);
  if (t.numel() == 0) return t;
  auto [fan_in, fan_out] = calculate_fan_in_and_fan_out(t);
  return init::normal_(t, 0.0, gain * std::sqrt(2.0 / static_cast<double>(fan_in + fan_out)));
}

}  // namespace hearth::nn::init
