// clamp as backends see it:
//   clamp   inputs {a} outputs {out}   ClampAttrs; same dtype; out may be a itself (clamp_)
#pragma once

#include "hearth/core/scalar.h"

namespace hearth {

// A bound that is absent is not applied.
struct ClampAttrs {
  Scalar min;
  Scalar max;
  bool has_min = false;
  bool has_max = false;
};

}  // namespace hearth
