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
  Tensor y = linear(x, weight, bias);
  if (!lora_A) return y;
  // In the adapter's dtype (float32 beside a half-precision base), back in y's.
  const Tensor xa = x.dtype() == lora_A->weight.dtype() ? x : x.to(lora_A->weight.dtype());
  const Tensor dropped = lora_dropout > 0 ? dropout(xa, lora_dropout, is_training()) : xa;
  Tensor delta = lora_B->forward(lora_A->forward(dropped)) * lora_scaling;
  if (delta.dtype() != y.dtype()) delta = delta.to(y.dtype());
  return y + delta;
}

void Linear::add_lora(int64_t r, double scaling, double dropout) {
  HEARTH_CHECK(!lora_A, ValueError, "[Linear] this layer already has an adapter");
  HEARTH_CHECK(r >= 1 && r <= std::max<int64_t>(1, std::min(in_features, out_features)), ValueError,
               "[Linear] adapter rank r: expected 1 to min(in_features, out_features) = ",
               std::min(in_features, out_features), ", got ", r);
  // PEFT's initialisation: A as a Linear's weight (kaiming_uniform_, a = sqrt 5), B zero.
  lora_A = register_module("lora_A", std::make_shared<Linear>(in_features, r, /*bias=*/false));
  lora_B = register_module("lora_B", std::make_shared<Linear>(r, out_features, /*bias=*/false));
  init::zeros_(lora_B->weight);
  // Adapters of a half-precision base are kept in float32, as PEFT keeps them:
  // their updates are small next to the weights they adapt.
  const DType dtype = weight.dtype() == DType::bfloat16 || weight.dtype() == DType::float16 ? DType::float32
                                                                                             : weight.dtype();
  lora_A->to(weight.device(), dtype);
  lora_B->to(weight.device(), dtype);
  lora_A->train(is_training());
  lora_B->train(is_training());
  lora_scaling = scaling;
  lora_dropout = dropout;
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
