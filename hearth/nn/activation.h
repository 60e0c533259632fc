// Activation modules: ReLU, GELU, Tanh (no parameters).
#pragma once

#include <string>

#include "hearth/nn/module.h"

namespace hearth::nn {

class ReLU : public Module {
 public:
  ReLU() : Module("ReLU") {}
  Tensor forward(const Tensor& x) override;
};

class GELU : public Module {
 public:
  // approximate: "none" (exact, with erf) or "tanh".
  explicit GELU(std::string approximate = "none");
  Tensor forward(const Tensor& x) override;
  std::string extra_repr() const override;

  std::string approximate;
};

class Tanh : public Module {
 public:
  Tanh() : Module("Tanh") {}
  Tensor forward(const Tensor& x) override;
};

}  // namespace hearth::nn
