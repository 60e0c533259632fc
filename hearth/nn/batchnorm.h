// BatchNorm1d / BatchNorm2d (torch.nn.BatchNorm*): per-channel normalisation
// with batch statistics while training and running statistics in eval mode.
#pragma once

#include <optional>

#include "hearth/nn/module.h"

namespace hearth::nn {

// Shared by the 1-D and 2-D variants, which differ only in the input ranks they accept.
class BatchNorm : public Module {
 public:
  // momentum: running = (1 - momentum) * running + momentum * batch; nullopt
  // gives the cumulative average (momentum = 1 / num_batches_tracked).
  // Buffers running_mean (0s), running_var (1s) and num_batches_tracked (int64
  // scalar) when track_running_stats; weight (1s) and bias (0s) when affine.
  Tensor forward(const Tensor& x) override;
  // relu(forward(x)) with the ReLU fused into the batch norm's kernels (one
  // pass less over the activations each way); what ResNet's blocks use.
  Tensor forward_relu(const Tensor& x);
  // relu(forward(x) + residual) in the batch norm's kernels (ResNet's block
  // tail: the add and the ReLU take no pass of their own either way).
  // residual has x's shape.
  Tensor forward_add_relu(const Tensor& x, const Tensor& residual);
  void reset_running_stats();
  void reset_parameters();
  std::string extra_repr() const override;

  int64_t num_features;
  double eps;
  std::optional<double> momentum;
  bool affine, track_running_stats;
  Tensor weight, bias, running_mean, running_var, num_batches_tracked;

 protected:
  BatchNorm(const char* type_name, int64_t num_features, double eps, std::optional<double> momentum, bool affine,
            bool track_running_stats);
  virtual void check_input(const Tensor& x) const = 0;

 private:
  Tensor normalize(const Tensor& x, bool relu, const Tensor& residual);
};

class BatchNorm1d : public BatchNorm {
 public:
  // Input [N, C] or [N, C, L].
  explicit BatchNorm1d(int64_t num_features, double eps = 1e-5, std::optional<double> momentum = 0.1,
                       bool affine = true, bool track_running_stats = true);

 protected:
  void check_input(const Tensor& x) const override;
};

class BatchNorm2d : public BatchNorm {
 public:
  // Input [N, C, H, W].
  explicit BatchNorm2d(int64_t num_features, double eps = 1e-5, std::optional<double> momentum = 0.1,
                       bool affine = true, bool track_running_stats = true);

 protected:
  void check_input(const Tensor& x) const override;
};

}  // namespace hearth::nn
