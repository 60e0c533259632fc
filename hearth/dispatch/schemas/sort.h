// Sorting along rows as backends see it: x [outer, n] contiguous. NaN orders
// above every number.
//   sort                inputs {x} outputs {values [outer, n], int64 indices [outer, n]}   SortAttrs (stable)
//   topk                inputs {x} outputs {values [outer, k], int64 indices [outer, k]}   TopkAttrs
//                       (sorted, best first; among equal values the lower index first)
//   An accelerator may leave sort and topk to the CPU fallback: no model hearth
//   trains needs them on the device.
#pragma once

#include <cstdint>

namespace hearth {

struct SortAttrs {
  bool descending = false;
};

struct TopkAttrs {
  int64_t k = 1;
  bool largest = true;
};

}  // namespace hearth
