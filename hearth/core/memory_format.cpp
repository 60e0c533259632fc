#include "hearth/core/memory_format.h"

#include "hearth/core/errors.h"

namespace hearth {
namespace {

// NHWC: dims from fastest to slowest.
constexpr int kChannelsLastOrder[4] = {1, 3, 2, 0};

}  // namespace

const char* memory_format_name(MemoryFormat fmt) {
  return fmt == MemoryFormat::channels_last ? "channels_last" : "contiguous";
}

Strides strides_for(const Shape& shape, MemoryFormat fmt) {
  if (fmt == MemoryFormat::contiguous) return contiguous_strides(shape);
  HEARTH_CHECK(shape.size() == 4, ShapeError, "[memory_format] channels_last needs a 4-D shape [N, C, H, W], got ",
               shape_str(shape));
  Strides st(4);
  int64_t acc = 1;
  for (int d : kChannelsLastOrder) {
    st[d] = acc;
    acc *= shape[d] > 0 ? shape[d] : 1;
  }
  return st;
}

bool is_layout(const Shape& shape, const Strides& strides, MemoryFormat fmt) {
  if (fmt == MemoryFormat::contiguous) return is_contiguous_layout(shape, strides);
  if (shape.size() != 4 || strides.size() != 4) return false;
  for (int64_t s : shape)
    if (s == 0) return true;
  int64_t expected = 1;
  for (int d : kChannelsLastOrder) {
    if (shape[d] == 1) continue;
    if (strides[d] != expected) return false;
    expected *= shape[d];
  }
  return true;
}

MemoryFormat suggest_memory_format(const Shape& shape, const Strides& strides) {
  if (is_layout(shape, strides, MemoryFormat::channels_last) && !is_contiguous_layout(shape, strides))
    return MemoryFormat::channels_last;
  return MemoryFormat::contiguous;
}

}  // namespace hearth
