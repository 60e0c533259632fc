#include "hearth/nn/activation.h"

#include "hearth/ops/elementwise.h"

namespace hearth::nn {

Tensor ReLU::forward(const Tensor& x) { return relu(x); }

GELU::GELU(std::string approximate) : Module("GELU"), approximate(std::move(approximate)) {
  HEARTH_CHECK(this->approximate == "none" || this->approximate == "tanh", ValueError,
               "[GELU] approximate must be \"none\" or \"tanh\", got \"", this->approximate, "\"");
}

Tensor GELU::forward(const Tensor& x) { return gelu(x, approximate); }

std::string GELU::extra_repr() const { return approximate == "none" ? "" : "approximate='" + approximate + "'"; }

Tensor Tanh::forward(const Tensor& x) { return tanh(x); }

}  // namespace hearth::nn
