// copy_ (strided, with dtype conversion) and fill_: the two kernels every
// backend must have, since transfers between devices are built on them.
#include "hearth/dispatch/schemas/copy.h"

#include <cstring>

#include "hearth/backends/cpu/strided_loop.h"
#include "hearth/core/dtype_visit.h"
#include "hearth/dispatch/registry.h"

namespace hearth::cpu {
namespace {

template <typename To, typename From>
To convert(From v) {
  if constexpr (std::is_same_v<To, bool>) {
    return static_cast<compute_t<From>>(v) != compute_t<From>(0);
  } else if constexpr (std::is_same_v<To, BFloat16> || std::is_same_v<To, Half>) {
    return To(static_cast<float>(static_cast<compute_t<From>>(v)));
  } else {
    return static_cast<To>(static_cast<compute_t<From>>(v));
  }
}

void copy_kernel(OpCall& call) {
  const Tensor& src = call.in(0);
  const Tensor& dst = call.out(0);
  if (src.dtype() == dst.dtype() && src.is_contiguous() && dst.is_contiguous()) {
    if (dst.nbytes() > 0) std::memcpy(dst.data_ptr(), src.data_ptr(), dst.nbytes());  // empty storage may be null
    return;
  }
  visit_dtype(dst.dtype(), [&](auto to_tag) {
    using To = typename decltype(to_tag)::type;
    visit_dtype(src.dtype(), [&](auto from_tag) {
      using From = typename decltype(from_tag)::type;
      unary_loop<To, From>(dst, src, [](From v) { return convert<To, From>(v); });
    });
  });
}

void fill_kernel(OpCall& call) {
  const Tensor& t = call.out(0);
  const Scalar& value = call.attrs<FillAttrs>().value;
  visit_dtype(t.dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    const T v = value.to<T>();
    for_each_strided<1>(make_operands<1>({&t}, t.shape()),
                        [&](const std::array<char*, 1>& p, const std::array<int64_t, 1>& s, int64_t n) {
                          for (int64_t i = 0; i < n; ++i) *reinterpret_cast<T*>(p[0] + i * s[0]) = v;
                        });
  });
}

HEARTH_REGISTER_KERNEL(copy_, kCpu, copy_kernel, DTypeSet::all());
HEARTH_REGISTER_KERNEL(fill_, kCpu, fill_kernel, DTypeSet::all());

}  // namespace
}  // namespace hearth::cpu
