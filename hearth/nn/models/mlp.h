// A multilayer perceptron: Linear layers with ReLU (and Dropout when
// dropout > 0) between them. Inputs with more than 2 dims are flattened from
// dim 1, so images go in as they come ([N, 1, 28, 28] -> [N, 784]).
//
// Parameter names: net.0.weight, net.0.bias, then net.<i>.* for each Linear.
#pragma once

#include <vector>

#include "hearth/nn/container.h"
#include "hearth/nn/module.h"

namespace hearth::nn::models {

class MLP : public Module {
 public:
  MLP(int64_t in_features, const std::vector<int64_t>& hidden, int64_t out_features, double dropout = 0.0);
  Tensor forward(const Tensor& x) override;

  int64_t in_features, out_features;
  std::shared_ptr<Sequential> net;
};

}  // namespace hearth::nn::models
