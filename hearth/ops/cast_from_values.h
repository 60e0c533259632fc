// A cast whose values were computed elsewhere: autocast's use of the copies
// of parameters the optimizer writes (param_half_copies.h).
#pragma once

#include "hearth/core/tensor.h"

namespace hearth::detail {

// cast(a, values.dtype()) from values already computed: a new tensor over
// `values`' memory, recorded by autograd exactly as cast() records the cast
// (the same node, so the gradient reaches `a` as through the cast). `values`
// must hold the cast's values in the layout cast() would give them. Defined
// beside cast() in copy.cpp.
Tensor cast_from_values(const Tensor& a, const Tensor& values);

}  // namespace hearth::detail
