#include "hearth/backends/vulkan/elementwise.h"

#include <algorithm>
#include <array>
#include <bit>
#include <cstring>

#include "hearth/backends/vulkan/kernel_launch.h"

namespace hearth::vulkan {
namespace {

constexpr int kOperands = 4;

struct Layout {
  std::vector<int64_t> sizes;                           // innermost first
  std::vector<std::array<int64_t, kOperands>> strides;  // per dim, per operand (elements)
};

// Drops size-1 dims, walks the rest in the output's memory order (innermost
// first) and merges neighbours that are contiguous in every operand, so most
// calls become one or two dims.
Layout collapse(const Tensor& out, const std::vector<Tensor>& inputs) {
  const int64_t nd = out.dim();
  auto stride_of = [&](int k, int64_t d) -> int64_t {
    if (k == 0) return out.stride(d);
    if (k > static_cast<int>(inputs.size())) return 0;
    const Tensor& t = inputs[k - 1];
    const int64_t td = d - (nd - t.dim());
    if (td < 0 || t.size(td) == 1) return 0;
    return t.stride(td);
  };
  std::vector<int64_t> order;
  for (int64_t d = nd - 1; d >= 0; --d)
    if (out.size(d) != 1) order.push_back(d);
  std::stable_sort(order.begin(), order.end(),
                   [&](int64_t a, int64_t b) { return std::abs(out.stride(a)) < std::abs(out.stride(b)); });
  Layout l;
  for (int64_t d : order) {
    std::array<int64_t, kOperands> st{};
    for (int k = 0; k < kOperands; ++k) st[k] = stride_of(k, d);
    if (!l.sizes.empty()) {
      bool merge = true;
      for (int k = 0; k < kOperands && merge; ++k) merge = st[k] == l.strides.back()[k] * l.sizes.back();
      if (merge) {
        l.sizes.back() *= out.size(d);
        continue;
      }
    }
    l.sizes.push_back(out.size(d));
    l.strides.push_back(st);
  }
  return l;
}

void push_int64(KernelParams& p, int64_t v) {
  p.u32(static_cast<uint32_t>(static_cast<uint64_t>(v))).u32(static_cast<uint32_t>(static_cast<uint64_t>(v) >> 32));
}

}  // namespace

bool integral_operands(const Tensor& out, const std::vector<Tensor>& inputs) {
  if (out.is_floating_point()) return false;
  for (const Tensor& t : inputs)
    if (t.defined() && t.is_floating_point()) return false;
  return true;
}

DTypeSet elementwise_dtypes() {
  return {DType::float32, DType::float64, DType::float16, DType::bfloat16,
          DType::int64,   DType::int32,   DType::uint8,   DType::bool_};
}

void run_elementwise(int op, const Tensor& out, const std::vector<Tensor>& inputs, bool integer_math,
                     const ElementwiseScalars& scalars) {
  const int64_t n = out.numel();
  if (n == 0) return;
  HEARTH_CHECK(n <= 0xffffffffLL, NotImplementedError,
               "[vulkan] elementwise kernels take at most 2^32 - 1 elements, got ", n);
  const Layout l = collapse(out, inputs);
  HEARTH_CHECK(l.sizes.size() <= EW_MAX_DIMS, NotImplementedError, "[vulkan] elementwise kernels take at most ",
               EW_MAX_DIMS, " non-mergeable dims, got ", l.sizes.size());

  bool any_double = out.dtype() == DType::float64;
  bool any_half = out.dtype() == DType::float16 || out.dtype() == DType::bfloat16;
  for (const Tensor& t : inputs) {
    any_double = any_double || (t.defined() && t.dtype() == DType::float64);
    any_half = any_half || (t.defined() && (t.dtype() == DType::float16 || t.dtype() == DType::bfloat16));
  }
  // A float64 operand needs a double variant and a 16-bit float a half one
  // (only they have double or half views of the buffers; each needs its
  // device feature, so the plain variants run everywhere).
  const char* shader = any_double && any_half ? "elementwise_double_half"
                       : any_double           ? "elementwise_double"
                       : any_half             ? "elementwise_half"
                       : integer_math         ? "elementwise_int"
                                              : "elementwise_float";
  if (any_double) require_float64(out.device().index, "elementwise");
  if (any_half) require_float16(out.device().index, "elementwise");
  Dispatch d(shader, out.device().index);
  d.tensors = {out, Tensor(), Tensor(), Tensor()};
  for (size_t k = 0; k < inputs.size(); ++k) d.tensors[k + 1] = inputs[k];
  auto code = [&](int k) -> uint32_t {
    return d.tensors[k].defined() ? static_cast<uint32_t>(d.tensors[k].dtype()) : static_cast<uint32_t>(DType::float32);
  };
  d.spec = {static_cast<uint32_t>(op), code(0), code(1), code(2), code(3), static_cast<uint32_t>(inputs.size())};

  d.params.u32(static_cast<uint32_t>(n)).u32(static_cast<uint32_t>(l.sizes.size()));
  for (int i = 0; i < EW_MAX_DIMS; ++i) d.params.u32(i < static_cast<int>(l.sizes.size()) ? l.sizes[i] : 1);
  for (int k = 0; k < kOperands; ++k)
    for (int i = 0; i < EW_MAX_DIMS; ++i) {
      const int64_t s = i < static_cast<int>(l.sizes.size()) ? l.strides[i][k] : 0;
      HEARTH_CHECK(s >= INT32_MIN && s <= INT32_MAX, NotImplementedError,
                   "[vulkan] elementwise kernels take strides that fit 32 bits, got ", s);
      d.params.i32(static_cast<int32_t>(s));
    }
  d.params.f32(static_cast<float>(scalars.s0.to_double())).f32(static_cast<float>(scalars.s1.to_double()));
  push_int64(d.params, scalars.s0.to_int());
  push_int64(d.params, scalars.s1.to_int());
  d.params.u32(scalars.flags);
  d.params.u64(std::bit_cast<uint64_t>(scalars.s0.to_double())).u64(std::bit_cast<uint64_t>(scalars.s1.to_double()));
  d.groups_x = d.groups_for(n);
  d.run();
}

}  // namespace hearth::vulkan
