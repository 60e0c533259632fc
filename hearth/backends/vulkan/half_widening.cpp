#include "hearth/backends/vulkan/half_widening.h"

#include <algorithm>
#include <numeric>

#include "hearth/backends/vulkan/elementwise.h"
#include "hearth/backends/vulkan/kernel_launch.h"
#include "hearth/dispatch/registry.h"
#include "hearth/ops/factory.h"

namespace hearth::vulkan {
namespace {

bool is_half(const Tensor& t) { return t.defined() && (t.dtype() == DType::float16 || t.dtype() == DType::bfloat16); }

}  // namespace

// Its dims in t's memory order: a channels-last input stays channels-last, as
// the kernels read layouts from strides.
Tensor widen(const Tensor& t) {
  std::vector<int64_t> order(static_cast<size_t>(t.dim()));
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(), [&](int64_t a, int64_t b) { return t.stride(a) > t.stride(b); });
  Shape shape;
  for (int64_t d : order) shape.push_back(t.size(d));
  std::vector<int64_t> inverse(order.size());
  for (size_t i = 0; i < order.size(); ++i) inverse[static_cast<size_t>(order[i])] = static_cast<int64_t>(i);
  Tensor w = empty(shape, DType::float32, t.device()).permute(inverse);
  run_elementwise(EW_COPY, w, {t}, false);
  return w;
}

void narrow_into(const Tensor& narrow, const Tensor& wide) { run_elementwise(EW_COPY, narrow, {wide}, false); }

void run_widened(OpCall& call, KernelFn float_kernel, OpId op) {
  bool any_half = false;
  for (const Tensor& t : call.inputs) any_half = any_half || is_half(t);
  for (const Tensor& t : call.outputs) any_half = any_half || is_half(t);
  if (!any_half) {
    float_kernel(call);
    return;
  }
  std::vector<Tensor> all(call.inputs);
  all.insert(all.end(), call.outputs.begin(), call.outputs.end());
  require_float16(all, op_name(op));

  OpCall wide = call;
  for (Tensor& t : wide.inputs)
    if (is_half(t)) t = widen(t);
  // Outputs keep their values too: a kernel may accumulate into one.
  for (Tensor& t : wide.outputs)
    if (is_half(t)) t = widen(t);
  float_kernel(wide);
  for (size_t i = 0; i < call.outputs.size(); ++i)
    if (is_half(call.outputs[i])) narrow_into(call.outputs[i], wide.outputs[i]);
  for (int i : find_op(op)->def.mutated_inputs)
    if (i < static_cast<int>(call.inputs.size()) && is_half(call.inputs[static_cast<size_t>(i)]))
      narrow_into(call.inputs[static_cast<size_t>(i)], wide.inputs[static_cast<size_t>(i)]);
}

}  // namespace hearth::vulkan
