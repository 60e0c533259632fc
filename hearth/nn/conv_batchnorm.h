// A convolution followed by a batch norm (and the residual add and ReLU that
// close a ResNet block), folded into one convolution for inference.
//
// While the batch norm trains, or gradients are recorded, this is the two
// modules one after the other. In inference (the batch norm in eval mode with
// running statistics, no gradient recorded) the batch norm is an affine map
// per channel, y = x * s + (beta - mean * s) with s = gamma / sqrt(var + eps),
// which folds into the convolution's weight and bias; the tail then runs as
// one convolution with its epilogue (conv2d_relu / conv2d_add_relu, one
// kernel where the backend fuses them) instead of a convolution and a batch
// norm pass over its output.
//
// The folded weight and bias are cached and made again when a source tensor
// changes (its storage or version counter: an optimizer step, a loaded state
// dict, a training step's running statistics) or when the dtype or layout
// wanted changes. They are made in the dtype the convolution will compute in
// (the autocast dtype inside an autocast region, so no cast per call) and in
// the input's memory format. HEARTH_FOLD_BATCH_NORM=0 turns the fold off.
#pragma once

#include <cstdint>
#include <utility>
#include <vector>

#include "hearth/nn/batchnorm.h"
#include "hearth/nn/conv.h"

namespace hearth::nn {

class ConvBatchNormFold {
 public:
  // bn(conv(x)), then + residual (when defined, only with relu), then the ReLU when relu.
  Tensor forward(Conv2d& conv, BatchNorm& bn, const Tensor& x, bool relu, const Tensor& residual = Tensor());

  // Whether forward() would fold for these modules now (eval mode, running
  // statistics, no gradient recorded); for tests and tools.
  static bool folds(const Conv2d& conv, const BatchNorm& bn);

 private:
  // One source tensor's identity at the time of the fold.
  using Stamp = std::pair<const void*, uint32_t>;
  std::vector<Stamp> stamps(const Conv2d& conv, const BatchNorm& bn) const;
  void refold(const Conv2d& conv, const BatchNorm& bn, DType dtype, MemoryFormat format);

  Tensor weight_, bias_;
  std::vector<Stamp> stamps_;
  // The source tensors of the fold, held so that none of their storages can
  // be freed and another take its address while the stamps name it.
  std::vector<Tensor> sources_;
  DType dtype_ = DType::float32;
  MemoryFormat format_ = MemoryFormat::contiguous;
};

}  // namespace hearth::nn
