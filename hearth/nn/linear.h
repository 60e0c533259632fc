// Linear: y = x W^T + b (torch.nn.Linear).
#pragma once

#include "hearth/nn/lora_layer.h"
#include "hearth/nn/module.h"

namespace hearth::nn {

class Linear : public Module, public LoraLayer {
 public:
  // weight [out, in] ~ kaiming_uniform_(a = sqrt 5), i.e. U(-1/sqrt(in), 1/sqrt(in));
  // bias [out] ~ U(-1/sqrt(in), 1/sqrt(in)), as PyTorch.
  Linear(int64_t in_features, int64_t out_features, bool bias = true);
  Tensor forward(const Tensor& x) override;
  void reset_parameters();
  std::string extra_repr() const override;

  int64_t in_features, out_features;
  Tensor weight, bias;  // bias undefined when constructed without one

  // A low-rank adapter (LoRA, hearth/nn/lora_layer.h): when set, forward
  // adds scaling * lora_B(lora_A(dropout(x))).
  void add_lora(int64_t r, double scaling, double dropout) override;
  void remove_lora() override;
  bool lora_fan_in_fan_out() const override { return false; }

 protected:
  Tensor& lora_base_weight() override { return weight; }
};

}  // namespace hearth::nn
