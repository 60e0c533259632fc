#include "hearth/nn/lora_layer.h"

#include <algorithm>

#include "hearth/autograd/grad_mode.h"
#include "hearth/nn/init.h"
#include "hearth/nn/linear.h"
#include "hearth/ops/linalg.h"
#include "hearth/ops/nn_functional.h"
#include "hearth/ops/view.h"

namespace hearth::nn {

void LoraLayer::attach_lora(Module& owner, const Tensor& weight, int64_t in_features, int64_t out_features, int64_t r,
                            double scaling, double dropout) {
  HEARTH_CHECK(!lora_A, ValueError, "[", owner.type_name(), "] this layer already has an adapter");
  HEARTH_CHECK(r >= 1 && r <= std::max<int64_t>(1, std::min(in_features, out_features)), ValueError, "[",
               owner.type_name(),
               "] adapter rank r: expected 1 to min(in_features, out_features) = ", std::min(in_features, out_features),
               ", got ", r);
  // PEFT's initialisation: A as a Linear's weight (kaiming_uniform_, a = sqrt 5), B zero.
  lora_A = owner.register_module("lora_A", std::make_shared<Linear>(in_features, r, /*bias=*/false));
  lora_B = owner.register_module("lora_B", std::make_shared<Linear>(r, out_features, /*bias=*/false));
  init::zeros_(lora_B->weight);
  // Adapters of a half-precision base are kept in float32, as PEFT keeps them:
  // their updates are small next to the weights they adapt.
  const DType dtype =
      weight.dtype() == DType::bfloat16 || weight.dtype() == DType::float16 ? DType::float32 : weight.dtype();
  lora_A->to(weight.device(), dtype);
  lora_B->to(weight.device(), dtype);
  lora_A->train(owner.is_training());
  lora_B->train(owner.is_training());
  lora_scaling = scaling;
  lora_dropout = dropout;
}

Tensor LoraLayer::add_lora_output(const Tensor& x, const Tensor& y, bool training) const {
  if (!lora_A) return y;
  // In the adapter's dtype (float32 beside a half-precision base), back in y's.
  const Tensor xa = x.dtype() == lora_A->weight.dtype() ? x : x.to(lora_A->weight.dtype());
  const Tensor dropped = lora_dropout > 0 ? hearth::dropout(xa, lora_dropout, training) : xa;
  Tensor delta = lora_B->forward(lora_A->forward(dropped)) * lora_scaling;
  if (delta.dtype() != y.dtype()) delta = delta.to(y.dtype());
  return y + delta;
}

void LoraLayer::merge_lora() {
  if (!lora_A) return;
  NoGradGuard no_grad;
  // In the adapter's precision (float32 beside a half base), rounded once.
  Tensor delta = matmul(lora_B->weight, lora_A->weight) * lora_scaling;  // [out, in]
  if (lora_fan_in_fan_out()) delta = transpose(delta, 0, 1);
  Tensor& weight = lora_base_weight();
  const Tensor merged = weight.to(delta.dtype()) + delta;
  weight.copy_(merged.to(weight.dtype()));
  remove_lora();
}

}  // namespace hearth::nn
