// torch.nn.init: filling parameters in place with the distributions layers
// start from. Every function draws from the global Philox generator through
// hearth::uniform_/normal_, so the same seed gives the same weights on every
// device, and runs without recording gradients (parameters are leaves that
// require grad).
#pragma once

#include <optional>
#include <string>
#include <utility>

#include "hearth/core/tensor.h"

namespace hearth::nn::init {

// The recommended gain for a nonlinearity: "linear", "conv1d", "conv2d",
// "conv3d", "sigmoid" (1), "tanh" (5/3), "relu" (sqrt 2), "leaky_relu"
// (sqrt(2 / (1 + slope^2)), slope = param or 0.01), "selu" (3/4).
double calculate_gain(const std::string& nonlinearity, std::optional<double> param = std::nullopt);
// (fan_in, fan_out) of a weight [out, in, *kernel]: in * prod(kernel) and
// out * prod(kernel). Needs at least 2 dims.
std::pair<int64_t, int64_t> calculate_fan_in_and_fan_out(const Tensor& t);

const Tensor& uniform_(const Tensor& t, double a = 0.0, double b = 1.0);
const Tensor& normal_(const Tensor& t, double mean = 0.0, double std = 1.0);
// Normal(mean, std) restricted to [a, b], by inverting the normal CDF of a
// uniform draw (exact in distribution, whatever the bounds).
const Tensor& trunc_normal_(const Tensor& t, double mean = 0.0, double std = 1.0, double a = -2.0, double b = 2.0);
const Tensor& constant_(const Tensor& t, double value);
const Tensor& zeros_(const Tensor& t);
const Tensor& ones_(const Tensor& t);

// mode: "fan_in" (keeps the forward variance) or "fan_out" (the backward's).
// `a` is the negative slope for leaky_relu.
const Tensor& kaiming_uniform_(const Tensor& t, double a = 0.0, const std::string& mode = "fan_in",
                               const std::string& nonlinearity = "leaky_relu");
const Tensor& kaiming_normal_(const Tensor& t, double a = 0.0, const std::string& mode = "fan_in",
                              const std::string& nonlinearity = "leaky_relu");
const Tensor& xavier_uniform_(const Tensor& t, double gain = 1.0);
const Tensor& xavier_normal_(const Tensor& t, double gain = 1.0);

// While one is alive, the random fills above (uniform_, normal_,
// trunc_normal_ and the kaiming/xavier ones built on them) fill their tensor
// with zeros on this thread and draw nothing from the generator. For building
// a model whose weights are loaded right after (load_pretrained,
// from_pretrained): drawing a VGG16's 138M initial weights only to overwrite
// them takes seconds, and the generator stays where the caller left it.
// Constant fills (BatchNorm's ones and zeros) still run. Guards nest.
class SkipInitGuard {
 public:
  SkipInitGuard();
  ~SkipInitGuard();
  SkipInitGuard(const SkipInitGuard&) = delete;
  SkipInitGuard& operator=(const SkipInitGuard&) = delete;
};
bool random_init_skipped();

}  // namespace hearth::nn::init
