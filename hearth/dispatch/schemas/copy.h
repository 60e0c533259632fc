// Writing values into a tensor as backends see it. dst and t may be strided views:
//   copy_        inputs {src} outputs {dst}     (same shape; dst dtype may differ)
//   fill_        outputs {t}                    FillAttrs
#pragma once

#include "hearth/core/scalar.h"

namespace hearth {

struct FillAttrs {
  Scalar value;
};

}  // namespace hearth
