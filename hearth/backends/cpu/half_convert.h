// The float detour of the GEMM-based kernels for bfloat16/float16: widen the
// operands, compute in float, narrow the result once (as PyTorch's CPU does).
#pragma once

#include <cstdint>
#include <type_traits>
#include <vector>

#include "hearth/backends/cpu/parallel.h"
#include "hearth/core/dtype_visit.h"
#include "hearth/core/tensor.h"
#include "hearth/dispatch/op_call.h"

namespace hearth::cpu {

template <typename T>
void to_float(const T* src, float* dst, int64_t n) {
  for (int64_t i = 0; i < n; ++i) dst[i] = static_cast<float>(src[i]);
}

// A contiguous float32 CPU copy of contiguous `t` (any floating dtype).
inline Tensor widen_to_float(const Tensor& t) {
  Tensor out = Tensor::empty(t.shape(), DType::float32);
  float* dst = out.data<float>();
  visit_dtype(t.dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    if constexpr (std::is_floating_point_v<compute_t<T>>) {
      const T* src = static_cast<const T*>(t.data_ptr());
      parallel_for(t.numel(), kGrainElementwise, [&](int64_t b, int64_t e) { to_float(src + b, dst + b, e - b); });
    }
  });
  return out;
}

// Writes `src` (dst.numel() floats) into contiguous `dst` of a floating dtype.
inline void from_float(const float* src, const Tensor& dst) {
  visit_dtype(dst.dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    if constexpr (std::is_floating_point_v<compute_t<T>>) {
      T* d = static_cast<T*>(dst.data_ptr());
      parallel_for(dst.numel(), kGrainElementwise, [&](int64_t b, int64_t e) {
        for (int64_t i = b; i < e; ++i) d[i] = static_cast<T>(src[i]);
      });
    }
  });
}

// Runs fn(TypeTag<T>{}, inputs, outputs) with T = float or double. Kernels of
// the 16-bit types get float32 copies of the (contiguous) inputs and float32
// outputs that are narrowed into the call's outputs afterwards. Undefined
// (absent optional) inputs stay undefined.
template <typename F>
void with_float_math(OpCall& call, F&& fn) {
  const DType dt = call.out(0).dtype();
  if (dt == DType::float32) return fn(TypeTag<float>{}, call.inputs, call.outputs);
  if (dt == DType::float64) return fn(TypeTag<double>{}, call.inputs, call.outputs);
  std::vector<Tensor> ins, outs;
  for (const Tensor& t : call.inputs) ins.push_back(t.defined() ? widen_to_float(t) : Tensor());
  for (const Tensor& t : call.outputs) outs.push_back(Tensor::empty(t.shape(), DType::float32));
  fn(TypeTag<float>{}, ins, outs);
  for (size_t i = 0; i < outs.size(); ++i) from_float(outs[i].data<float>(), call.outputs[i]);
}

}  // namespace hearth::cpu
