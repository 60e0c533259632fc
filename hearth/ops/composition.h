// Helpers for the compositions of fusions (hearth/dispatch/registry.h): each
// computes a fused op's call with the functional ops and the primitive ops of
// the call's own device, and writes the call's preallocated outputs.
#pragma once

#include "hearth/autograd/grad_mode.h"
#include "hearth/ops/autocast.h"
#include "hearth/ops/elementwise.h"

namespace hearth::detail {

// What a composition runs under: a kernel's operands carry no autograd
// history worth recording, and autocast must not change the dtypes the fused
// kernel's contract fixes.
struct CompositionScope {
  NoGradGuard no_grad;
  AutocastSuspend no_autocast;
};

// Writes value into the call's output `out` (its dtype and layout kept), when
// the call wants that output.
inline void write_output(const Tensor& out, const Tensor& value) {
  if (out.defined()) copy_(out, value);
}

// t in dtype (itself when it already is).
inline Tensor as_dtype(const Tensor& t, DType dtype) { return t.dtype() == dtype ? t : cast(t, dtype); }

}  // namespace hearth::detail
