// The neural-network ops (torch.nn.functional): convolution, pooling,
// normalisation, softmax, losses, embedding, dropout.
#pragma once

#include <array>
#include <string>

#include "hearth/core/tensor.h"

namespace hearth {

using Pair = std::array<int64_t, 2>;

// x [N, C, H, W], weight [O, C/groups, kH, kW], bias [O] optional.
Tensor conv2d(const Tensor& x, const Tensor& weight, const Tensor& bias = Tensor(), Pair stride = {1, 1},
              Pair padding = {0, 0}, Pair dilation = {1, 1}, int64_t groups = 1);
// relu(conv2d(...)) with the ReLU applied in the bias's pass (one pass over the
// output fewer) and its gradient mask taken from the saved output.
Tensor conv2d_relu(const Tensor& x, const Tensor& weight, const Tensor& bias = Tensor(), Pair stride = {1, 1},
                   Pair padding = {0, 0}, Pair dilation = {1, 1}, int64_t groups = 1);
// relu(conv2d(...) + residual), residual in the output's shape: ResNet's block
// tail with batch norm folded into the convolution (inference). Where the
// backend fuses it, the bias, the add and the ReLU are the convolution's
// epilogue; the residual's gradient is the masked output gradient.
Tensor conv2d_add_relu(const Tensor& x, const Tensor& weight, const Tensor& bias, const Tensor& residual,
                       Pair stride = {1, 1}, Pair padding = {0, 0}, Pair dilation = {1, 1}, int64_t groups = 1);
Tensor max_pool2d(const Tensor& x, Pair kernel, Pair stride = {0, 0}, Pair padding = {0, 0},
                  Pair dilation = {1, 1}, bool ceil_mode = false);  // stride {0,0} = kernel
Tensor avg_pool2d(const Tensor& x, Pair kernel, Pair stride = {0, 0}, Pair padding = {0, 0}, bool ceil_mode = false,
                  bool count_include_pad = true);
Tensor adaptive_avg_pool2d(const Tensor& x, Pair output_size);

// training: normalise with batch statistics and update running_mean/var in place
// (momentum as PyTorch: running = (1 - m) * running + m * batch, unbiased var).
// Otherwise normalise with the running statistics. weight/bias optional.
// num_batches_tracked (optional, training only): a one-element int64 counter on
// x's device that the call increments in place, inside its own kernels.
Tensor batch_norm(const Tensor& x, const Tensor& running_mean, const Tensor& running_var, const Tensor& weight,
                  const Tensor& bias, bool training, double momentum = 0.1, double eps = 1e-5,
                  const Tensor& num_batches_tracked = Tensor());
// relu(batch_norm(...)) in the batch norm's own kernels: no separate pass over
// the output forward, and the ReLU's mask (from the saved output) applied
// inside the batch norm's backward.
Tensor batch_norm_relu(const Tensor& x, const Tensor& running_mean, const Tensor& running_var, const Tensor& weight,
                       const Tensor& bias, bool training, double momentum = 0.1, double eps = 1e-5,
                       const Tensor& num_batches_tracked = Tensor());
// relu(batch_norm(...) + residual), ResNet's block tail, in the batch norm's own
// kernels: the add and the ReLU cost no pass of their own forward, and the
// backward writes the residual's gradient (grad_y masked by the ReLU) from a
// pass it already makes. residual has x's shape (any layout or floating dtype:
// it is converted to x's); gradients flow to x, residual, weight and bias.
Tensor batch_norm_add_relu(const Tensor& x, const Tensor& residual, const Tensor& running_mean,
                           const Tensor& running_var, const Tensor& weight, const Tensor& bias, bool training,
                           double momentum = 0.1, double eps = 1e-5, const Tensor& num_batches_tracked = Tensor());
// Normalises over the trailing dims given by normalized_shape.
Tensor layer_norm(const Tensor& x, const Shape& normalized_shape, const Tensor& weight = Tensor(),
                  const Tensor& bias = Tensor(), double eps = 1e-5);
// layer_norm(add(dropout(x, p, training), residual), normalized_shape, weight, bias, eps):
// a transformer block's tail (BERT's BertSelfOutput and BertOutput). Where the
// backend has the kernel, one kernel forward (x and the residual read once, no
// dropout mask written) and one backward (both input gradients and the
// parameter gradients; the mask drawn again from the forward's Philox
// counters), with the results of the three ops: the same elements dropped for
// the same generator state, rounded as they round, nothing drawn when
// !training or p == 0. Takes x and a residual of x's shape, of x's dtype or
// float32 beside a half x (the output is then float32, as add promotes);
// other calls, and every call after set_fused_layer_norm_enabled(false), run the three ops.
Tensor dropout_add_layer_norm(const Tensor& x, const Tensor& residual, const Shape& normalized_shape,
                              const Tensor& weight = Tensor(), const Tensor& bias = Tensor(), double p = 0.0,
                              bool training = false, double eps = 1e-5);
// Whether dropout_add_layer_norm may take its fused kernel: on unless
// set_fused_layer_norm_enabled(false) (tests compare both paths in one process).
bool fused_layer_norm_enabled();
void set_fused_layer_norm_enabled(bool on);

Tensor softmax(const Tensor& x, int64_t dim);
Tensor log_softmax(const Tensor& x, int64_t dim);

// reduction: "mean", "sum" or "none".
// logits [N, C] or [N, C, d1...]; target int64 class indices [N] / [N, d1...].
Tensor cross_entropy(const Tensor& logits, const Tensor& target, const Tensor& weight = Tensor(),
                     int64_t ignore_index = -100, const std::string& reduction = "mean",
                     double label_smoothing = 0.0);
Tensor nll_loss(const Tensor& log_probs, const Tensor& target, const Tensor& weight = Tensor(),
                int64_t ignore_index = -100, const std::string& reduction = "mean");
Tensor mse_loss(const Tensor& input, const Tensor& target, const std::string& reduction = "mean");

// weight [num_embeddings, dim], indices int64 of any shape; rows at padding_idx get no gradient.
Tensor embedding(const Tensor& indices, const Tensor& weight, int64_t padding_idx = -1);
// Zeroes elements with probability p (Philox) and scales the rest by 1/(1-p); identity when !training.
Tensor dropout(const Tensor& x, double p = 0.5, bool training = true);

}  // namespace hearth
