// Linear: y = x W^T + b (torch.nn.Linear).
#pragma once

#include "hearth/nn/module.h"

namespace hearth::nn {

class Linear : public Module {
 public:
  // weight [out, in] ~ kaiming_uniform_(a = sqrt 5), i.e. U(-1/sqrt(in), 1/sqrt(in));
  // bias [out] ~ U(-1/sqrt(in), 1/sqrt(in)), as PyTorch.
  Linear(int64_t in_features, int64_t out_features, bool bias = true);
  Tensor forward(const Tensor& x) override;
  void reset_parameters();
  std::string extra_repr() const override;

  int64_t in_features, out_features;
  Tensor weight, bias;  // bias undefined when constructed without one

  // A low-rank adapter (LoRA, hearth/nn/lora.h): when set, forward adds
  // scaling * lora_B(lora_A(dropout(x))). Registered as the submodules
  // "lora_A" [r, in] and "lora_B" [out, r], PEFT's names.
  std::shared_ptr<Linear> lora_A, lora_B;
  double lora_scaling = 0.0;
  double lora_dropout = 0.0;
  void add_lora(int64_t r, double scaling, double dropout);
  void remove_lora();
};

}  // namespace hearth::nn
