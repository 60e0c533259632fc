#include "hearth/nn/linear.h"

#include <algorithm>
#include <cmath>

#include "hearth/nn/init.h"
#include "hearth/ops/factory.h"
#include "hearth/ops/linalg.h"
#include "hearth/ops/nn_functional.h"

namespace hearth::nn {

Linear::Linear(int64_t in_features, int64_t out_features, bool bias)
    : Module("Linear"), in_features(in_features), out_features(out_features) {
  HEARTH_CHECK(in_features >= 0 && out_features >= 0, ValueError,
               "[Linear] in_features and out_features must be non-negative, got ", in_features, " and ", out_features);
  weight = register_parameter("weight", empty({out_features, in_features}));
  this->bias = register_parameter("bias", bias ? empty({out_features}) : Tensor());
  reset_parameters();
}

void Linear::reset_parameters() {
  init::kaiming_uniform_(weight, std::sqrt(5.0));
  if (bias.defined()) {
    const double bound = in_features > 0 ? 1.0 / std::sqrt(static_cast<double>(in_features)) : 0.0;
    init::uniform_(bias, -bound, bound);
  }
}

Tensor Linear::forward(const Tensor& x) {
  HEARTH_CHECK(x.defined() && x.dim() >= 1 && x.size(-1) == in_features, ShapeError,
               "[Linear] expected an input whose last dim is in_features=", in_features, ", got shape ",
               x.defined() ? x.shape_string() : "undefined");
  return add_lora_output(x, linear(x, weight, bias), is_training());
}

void Linear::add_lora(int64_t r, double scaling, double dropout) {
  attach_lora(*this, weight, in_features, out_features, r, scaling, dropout);
}

void Linear::remove_lora() {
  if (!lora_A) return;
  remove_child("lora_A");
  remove_child("lora_B");
  lora_A.reset();
  lora_B.reset();
}

std::string Linear::extra_repr() const {
  return "in_features=" + std::to_string(in_features) + ", out_features=" + std::to_string(out_features) +
         ", bias=" + (bias.defined() ? "true" : "false");
}

}  // namespace hearth::nn
