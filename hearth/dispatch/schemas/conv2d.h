// 2-D convolution as backends see it. The functional layer validates shapes,
// batches unbatched input, and makes every image tensor (x, weight, out and
// their gradients) dense in ONE memory format, the input's: all NCHW-contiguous
// or all NHWC (channels_last); bias and grad_bias are plain [O] vectors. The
// kernels read the layout from the strides (a kernel may compute on NCHW copies
// of NHWC calls, as the CPU reference does, or take the strides as they are) and their
// geometry from the shapes (always logical [N, C, H, W]) and Conv2dAttrs.
// Cg = C / groups input channels and Og = O / groups output channels per group.
//   conv2d                  inputs {x [N, C, H, W], weight [O, Cg, kH, kW], bias [O] or undefined,
//                                   residual [N, O, OH, OW] (conv2d_add_relu only)}
//                           outputs {out [N, O, OH, OW]}
//   conv2d_backward_input   inputs {grad_out [N, O, OH, OW], weight [O, Cg, kH, kW], partial [N, C, H, W]?}
//                           outputs {grad_x [N, C, H, W]}            (backward-data; fully overwritten)
//     partial: a sum of x's other gradients to add the result into:
//     grad_x = backward-data + partial (the autograd engine's sum of a tensor's
//     gradients, added in the convolution's epilogue where a backend can, a
//     GEMM's beta = 1). It has
//     grad_x's dtype and layout and is usually grad_x itself (the sum written
//     in place); a kernel must also accept a distinct tensor (the CPU
//     fallback's copy).
//   conv2d_backward_weight  inputs {grad_out [N, O, OH, OW], x [N, C, H, W]}
//                           outputs {grad_weight [O, Cg, kH, kW]}    (backward-filter; fully overwritten)
//   conv2d_backward_bias    inputs {grad_out [N, O, OH, OW], y [N, O, OH, OW]?}
//                           outputs {grad_bias [O], masked_grad [N, O, OH, OW]?}; no attributes
//     y: the fused ReLU's saved output (conv2d_relu's backward). grad_out is
//     first masked where y is not positive (relu_backward's rule) and the
//     masked gradient, which the other backward passes take, is written to
//     output 1 by the pass that sums it: one read of grad_out fewer.
//   conv2d_relu             conv2d's operands with relu set (Conv2dAttrs::relu): the forward
//                           writes max(conv + bias, 0), the ReLU that follows most
// convolutions with a bias (VGG) in the same pass as the bias; the functional
// layer masks the gradient with the saved output before the backward ops.
//   conv2d_add_relu         conv2d_relu with a fourth input, the residual, in out's
//                           shape, dtype and memory format: out = max(conv + bias +
// residual, 0), ResNet's block tail once batch norm is folded into the
// convolution for inference. Backends may compute the whole epilogue in the
// accumulation type and round once (a fused epilogue does); the composition
// rounds after the bias and after the add, a difference within the parity
// tolerance of a reduction over C * kH * kW products.
// All tensors share one floating dtype and none is empty (the functional layer
// handles empty batches and channel-less weights itself). OH = (H + 2 pH - dH (kH - 1) - 1) / sH + 1, likewise OW.
#pragma once

#include <array>
#include <cstdint>

namespace hearth {

struct Conv2dAttrs {
  std::array<int64_t, 2> stride{1, 1};
  std::array<int64_t, 2> padding{0, 0};
  std::array<int64_t, 2> dilation{1, 1};
  int64_t groups = 1;
  bool relu = false;  // out = max(conv + bias, 0)
};

}  // namespace hearth
