// Memory formats of dense tensors, as PyTorch names them. `contiguous` is the
// row-major layout (NCHW for images); `channels_last` is NHWC memory behind the
// logical [N, C, H, W] shape: strides [H*W*C, 1, W*C, C]. Ops on images keep
// their input's format, so a model converted once stays in it end to end.
#pragma once

#include "hearth/core/shape.h"

namespace hearth {

enum class MemoryFormat { contiguous, channels_last };

const char* memory_format_name(MemoryFormat fmt);

// Dense strides of `shape` in `fmt`; channels_last needs a 4-D shape.
Strides strides_for(const Shape& shape, MemoryFormat fmt);
// Whether `strides` describe a dense layout of `shape` in `fmt` (size-1 dims
// may carry any stride, as for is_contiguous_layout).
bool is_layout(const Shape& shape, const Strides& strides, MemoryFormat fmt);
// channels_last when the layout is dense NHWC and not also plain contiguous
// (the two coincide when C == 1 or H == W == 1); contiguous otherwise.
MemoryFormat suggest_memory_format(const Shape& shape, const Strides& strides);

}  // namespace hearth
