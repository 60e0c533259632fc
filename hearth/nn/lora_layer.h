// What every layer that can carry a low-rank adapter (LoRA, hearth/nn/lora.h)
// shares: the adapter's two projections, registered as the layer's
// submodules "lora_A" [r, in] and "lora_B" [out, r] (PEFT's names and shapes
// whatever the layer's own weight layout), and how they add to its output:
//   y = base(x) + scaling * lora_B(lora_A(dropout(x)))
// Linear (weight [out, in]) and GPT-2's Conv1D (weight [in, out], PEFT's
// fan_in_fan_out) hold one.
#pragma once

#include <memory>

#include "hearth/nn/module.h"

namespace hearth::nn {

class Linear;

class LoraLayer {
 public:
  virtual ~LoraLayer() = default;

  std::shared_ptr<Linear> lora_A, lora_B;
  double lora_scaling = 0.0;
  double lora_dropout = 0.0;

  bool has_lora() const { return lora_A != nullptr; }
  // Adds an adapter of rank r (A as a Linear's weight is drawn, B zero, so the
  // layer starts computing what it computed), in float32 beside a
  // half-precision weight. ValueError for a second adapter or a bad rank.
  virtual void add_lora(int64_t r, double scaling, double dropout) = 0;
  virtual void remove_lora() = 0;
  // Folds scaling * B A into the weight (transposed for an [in, out] weight)
  // and removes the adapter.
  void merge_lora();
  // Whether the layer's weight is stored [in, out] (PEFT's fan_in_fan_out).
  virtual bool lora_fan_in_fan_out() const = 0;

 protected:
  // The pieces add_lora and forward are made of; `owner` is the layer itself.
  void attach_lora(Module& owner, const Tensor& weight, int64_t in_features, int64_t out_features, int64_t r,
                   double scaling, double dropout);
  // y plus the adapter's term for input x, in y's dtype.
  Tensor add_lora_output(const Tensor& x, const Tensor& y, bool training) const;
  virtual Tensor& lora_base_weight() = 0;
};

}  // namespace hearth::nn
