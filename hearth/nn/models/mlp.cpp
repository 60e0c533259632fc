#include "hearth/nn/models/mlp.h"

#include "hearth/nn/activation.h"
#include "hearth/nn/dropout.h"
#include "hearth/nn/linear.h"
#include "hearth/ops/view.h"

namespace hearth::nn::models {

MLP::MLP(int64_t in_features, const std::vector<int64_t>& hidden, int64_t out_features, double dropout)
    : Module("MLP"), in_features(in_features), out_features(out_features) {
  HEARTH_CHECK(in_features > 0 && out_features > 0, ValueError,
               "[MLP] in_features and out_features must be positive, got ", in_features, " and ", out_features);
  HEARTH_CHECK(dropout >= 0.0 && dropout < 1.0, ValueError, "[MLP] dropout must be in [0, 1), got ", dropout);
  net = register_module("net", std::make_shared<Sequential>());
  int64_t width = in_features;
  for (int64_t h : hidden) {
    HEARTH_CHECK(h > 0, ValueError, "[MLP] hidden sizes must be positive, got ", h);
    net->push_back(std::make_shared<Linear>(width, h));
    net->push_back(std::make_shared<ReLU>());
    if (dropout > 0.0) net->push_back(std::make_shared<Dropout>(dropout));
    width = h;
  }
  net->push_back(std::make_shared<Linear>(width, out_features));
}

Tensor MLP::forward(const Tensor& x) {
  HEARTH_CHECK(x.defined() && x.dim() >= 2, ShapeError, "[MLP] expected an input [N, ...] with a batch dim, got ",
               x.defined() ? "shape " + x.shape_string() : std::string("an undefined tensor"));
  return net->forward(x.dim() > 2 ? flatten(x, 1) : x);
}

}  // namespace hearth::nn::models
