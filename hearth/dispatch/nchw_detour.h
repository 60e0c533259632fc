// For kernels that compute on NCHW memory only: a call carrying channels_last
// (NHWC) tensors runs through this detour: NCHW copies of the inputs, NCHW
// scratch outputs on the same device, then the results copied back into the
// caller's NHWC outputs. Correct for every layout at the price of the two
// transposes. The CPU backend's reference convolution and its pooling use it
// (a library that reads NHWC in place does not need it); an accelerator
// backend may use it for the dtypes its library has no NHWC kernels for.
#pragma once

#include "hearth/dispatch/dispatch.h"
#include "hearth/dispatch/op_call.h"

namespace hearth {

inline bool all_contiguous(const std::vector<Tensor>& ts) {
  for (const Tensor& t : ts)
    if (t.defined() && !t.is_contiguous()) return false;
  return true;
}

// Runs kernel(call) directly when every tensor is contiguous, else on NCHW copies.
inline void run_in_nchw(OpCall& call, KernelFn kernel) {
  if (all_contiguous(call.inputs) && all_contiguous(call.outputs)) return kernel(call);
  OpCall nchw = call;
  for (Tensor& t : nchw.inputs) {
    if (!t.defined() || t.is_contiguous()) continue;
    Tensor dense = Tensor::empty(t.shape(), t.dtype(), t.device());
    copy_into(dense, t);
    t = dense;
  }
  for (Tensor& t : nchw.outputs)
    if (t.defined() && !t.is_contiguous()) t = Tensor::empty(t.shape(), t.dtype(), t.device());
  kernel(nchw);
  for (size_t i = 0; i < call.outputs.size(); ++i)
    if (!nchw.outputs[i].is_same(call.outputs[i])) copy_into(call.outputs[i], nchw.outputs[i]);
}

// A kernel registered as in_nchw<k> accepts both layouts.
template <KernelFn kernel>
void in_nchw(OpCall& call) {
  run_in_nchw(call, kernel);
}

}  // namespace hearth
