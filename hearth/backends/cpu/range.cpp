// arange_ and linspace_ on the CPU: each element is computed from its index
// alone (no running sum), so parallel chunks agree with a serial loop and with
// any other backend.
#include "hearth/dispatch/schemas/range.h"

#include "hearth/backends/cpu/parallel.h"
#include "hearth/core/dtype_visit.h"
#include "hearth/dispatch/registry.h"

namespace hearth::cpu {
namespace {

template <typename T, typename F>
void fill_by_index(const Tensor& t, F value_at) {
  T* p = static_cast<T*>(t.data_ptr());
  parallel_for(t.numel(), kGrainElementwise, [&](int64_t b, int64_t e) {
    for (int64_t i = b; i < e; ++i) p[i] = value_at(i);
  });
}

void arange_kernel(OpCall& call) {
  const RangeAttrs& at = call.attrs<RangeAttrs>();
  const Tensor& t = call.out(0);
  const bool integer_steps =
      at.start.category() != DTypeCategory::floating && at.step.category() != DTypeCategory::floating;
  visit_dtype(t.dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    if (std::is_integral_v<T> && integer_steps) {
      const int64_t start = at.start.to_int(), step = at.step.to_int();
      fill_by_index<T>(t, [=](int64_t i) { return static_cast<T>(start + i * step); });
    } else {
      const double start = at.start.to_double(), step = at.step.to_double();
      fill_by_index<T>(t, [=](int64_t i) { return static_cast<T>(static_cast<compute_t<T>>(start + i * step)); });
    }
  });
}

void linspace_kernel(OpCall& call) {
  const LinspaceAttrs& at = call.attrs<LinspaceAttrs>();
  const Tensor& t = call.out(0);
  const int64_t n = at.steps;
  const double step = n > 1 ? (at.end - at.start) / static_cast<double>(n - 1) : 0.0;
  const int64_t half = n / 2;
  visit_dtype(t.dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    fill_by_index<T>(t, [&](int64_t i) {
      double v = (i < half || n == 1) ? at.start + step * static_cast<double>(i)
                                      : at.end - step * static_cast<double>(n - 1 - i);
      return static_cast<T>(static_cast<compute_t<T>>(v));
    });
  });
}

HEARTH_REGISTER_KERNEL(arange_, kCpu, arange_kernel, DTypeSet::floating() | DTypeSet::integral());
HEARTH_REGISTER_KERNEL(linspace_, kCpu, linspace_kernel, DTypeSet::floating() | DTypeSet::integral());

}  // namespace
}  // namespace hearth::cpu
