// 2-D pooling as backends see it. The functional layer batches unbatched input
// and makes every tensor of a call (x, out, indices, grads) dense in one memory
// format, the input's: all NCHW-contiguous or all NHWC (channels_last); kernels
// read the layout from the strides (the CPU backend pools NCHW copies of NHWC
// calls). Shapes are logical [N, C, H, W]; outputs are fully overwritten.
// Kernels are only called with non-empty outputs.
// Each (n, c) plane is pooled independently.
//   max_pool2d                    inputs {x [N, C, H, W]} outputs {out [N, C, OH, OW], uint8 indices [N, C, OH, OW]?}
//                                 Pool2dAttrs; indices, when wanted (only for windows of at most 255 cells),
//                                 are the argmax's place ky * kw + kx in its output's window: the cell
//                                 (o_y s_h - p_h + ky d_h, o_x s_w - p_w + kx d_w). One byte per output where
//                                 the input plane's h * W + w took eight (ResNet-50 keeps them from its
//                                 stem's forward to its backward: 26 MB at batch 128, not 205 MB).
//                                 Windows clipped by padding ignore the padded
//                                 cells; NaN wins (as in PyTorch), and among equal maxima the first in
//                                 window order (row by row).
//   max_pool2d_backward           inputs {grad_out [N, C, OH, OW], indices?, x [N, C, H, W]?}
//                                 outputs {grad_x [N, C, H, W]} Pool2dAttrs of the forward. Each output's
//                                 gradient goes to its window's argmax: the saved index, or, without one,
//                                 the argmax found again in x under the forward's rule. A kernel may
//                                 gather, since the outputs whose window can hold a cell follow from the
//                                 attributes.
//   avg_pool2d                    inputs {x} outputs {out} Pool2dAttrs (dilation unused)
//   avg_pool2d_backward           inputs {grad_out} outputs {grad_x} Pool2dAttrs
//   adaptive_avg_pool2d           inputs {x} outputs {out}; window i spans [floor(i H / OH), ceil((i + 1) H / OH))
//   adaptive_avg_pool2d_backward  inputs {grad_out} outputs {grad_x}
// avg_pool2d's window is [o s - p, o s - p + k) clipped to [0, H + p); its
// divisor is that clipped size when count_include_pad, else the part inside
// [0, H) (PyTorch's rule). The same applies to W.
#pragma once

#include <array>
#include <cstdint>

namespace hearth {

struct Pool2dAttrs {
  std::array<int64_t, 2> kernel{1, 1};
  std::array<int64_t, 2> stride{1, 1};
  std::array<int64_t, 2> padding{0, 0};
  std::array<int64_t, 2> dilation{1, 1};
  bool count_include_pad = true;
};

}  // namespace hearth
