// The index-computed fills as backends see them:
//   arange_      outputs {t}                    RangeAttrs: t[i] = start + i * step (1-D, contiguous)
//   linspace_    outputs {t}                    LinspaceAttrs (1-D, contiguous), see below
#pragma once

#include <cstdint>

#include "hearth/core/scalar.h"

namespace hearth {

// Integer dtypes compute in int64 when start and step are integers, so large
// ranges stay exact; everything else computes in double, then converts.
struct RangeAttrs {
  Scalar start;
  Scalar step;
};

// steps values from start to end inclusive, computed in double as
// start + i * step for i < steps / 2 and end - (steps - 1 - i) * step after,
// with step = (end - start) / (steps - 1): both ends are exact.
struct LinspaceAttrs {
  double start = 0;
  double end = 0;
  int64_t steps = 0;
};

}  // namespace hearth
