// Checks a CNN's inference with its batch norms folded into the convolutions
// (eval mode, no gradient recorded) against the same model run unfolded.
#pragma once

#include <gtest/gtest.h>

#include "hearth/autograd/grad_mode.h"
#include "hearth/nn/batchnorm.h"
#include "hearth/ops/elementwise.h"
#include "hearth/ops/factory.h"
#include "hearth/ops/reduction.h"

namespace hearth::testing {

// Running statistics and affine maps away from the identity, so that a fold
// which dropped any of them would show.
inline void randomize_batch_norms(nn::Module& model) {
  NoGradGuard no_grad;
  for (const auto& m : model.modules()) {
    auto bn = std::dynamic_pointer_cast<nn::BatchNorm>(m);
    if (!bn) continue;
    const Shape c{bn->num_features};
    copy_(bn->running_mean, mul(randn(c), 0.5));
    copy_(bn->running_var, add(rand(c), 0.5));
    copy_(bn->weight, add(rand(c), 0.5));
    copy_(bn->bias, mul(randn(c), 0.1));
  }
}

// model in eval mode: the folded output (no gradient recorded) equals the
// unfolded one (gradients recorded keep the modules apart) within float32
// rounding, and differs from it somewhere (the fold did run: its products
// round differently).
inline void expect_folded_inference_matches(nn::Module& model, const Tensor& x) {
  randomize_batch_norms(model);
  model.eval();
  const Tensor unfolded = model.forward(x).detach();
  Tensor folded;
  {
    NoGradGuard no_grad;
    folded = model.forward(x);
  }
  const double scale = amax(abs(unfolded)).item<double>();
  const double diff = amax(abs(sub(folded, unfolded))).item<double>();
  EXPECT_LE(diff, 1e-4 * scale) << "scale " << scale;
  EXPECT_GT(diff, 0.0) << "bit-identical outputs: the batch norms were not folded";
}

}  // namespace hearth::testing
