#include "hearth/nn/layer_norm.h"

#include <sstream>

#include "hearth/nn/init.h"
#include "hearth/ops/factory.h"
#include "hearth/ops/nn_functional.h"

namespace hearth::nn {

LayerNorm::LayerNorm(Shape normalized_shape, double eps, bool elementwise_affine, bool bias)
    : Module("LayerNorm"),
      normalized_shape(std::move(normalized_shape)),
      eps(eps),
      elementwise_affine(elementwise_affine) {
  HEARTH_CHECK(!this->normalized_shape.empty(), ValueError, "[LayerNorm] normalized_shape must not be empty");
  HEARTH_CHECK(eps > 0, ValueError, "[LayerNorm] eps must be positive, got ", eps);
  if (elementwise_affine) {
    weight = register_parameter("weight", ones(this->normalized_shape));
    this->bias = register_parameter("bias", bias ? zeros(this->normalized_shape) : Tensor());
  }
}

void LayerNorm::reset_parameters() {
  if (weight.defined()) init::ones_(weight);
  if (bias.defined()) init::zeros_(bias);
}

Tensor LayerNorm::forward(const Tensor& x) { return layer_norm(x, normalized_shape, weight, bias, eps); }

std::string LayerNorm::extra_repr() const {
  std::ostringstream os;
  os << shape_str(normalized_shape) << ", eps=" << eps
     << ", elementwise_affine=" << (elementwise_affine ? "true" : "false");
  return os.str();
}

}  // namespace hearth::nn
