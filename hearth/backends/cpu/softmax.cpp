// softmax and log_softmax along the middle dim of a dense [outer, D, inner]
// buffer, and their backward passes. Exponentials in compute_t<T>, sums in
// double; the max is subtracted first so large logits cannot overflow.
#include <cmath>
#include <limits>

#include "hearth/backends/cpu/level_kernel_registrar.h"
#include "hearth/backends/cpu/nn_kernel_util.h"
#include "hearth/backends/cpu/parallel.h"

namespace hearth::cpu {
namespace {

// Calls f(offset, stride) for every line along D: elements offset + k * stride.
template <typename F>
void for_each_line(const Tensor& t, F&& f) {
  const int64_t outer = t.shape()[0], D = t.shape()[1], inner = t.shape()[2];
  parallel_for(outer * inner, std::max<int64_t>(1, kGrainElementwise / std::max<int64_t>(D, 1)),
               [&](int64_t b, int64_t e) {
                 for (int64_t l = b; l < e; ++l) f((l / inner) * D * inner + l % inner, inner);
               });
}

template <bool kLog>
void softmax_forward_kernel(OpCall& call) {
  const Tensor &x = call.in(0), &y = call.out(0);
  const int64_t D = x.shape()[1];
  visit_floating(x.dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    using Cm = compute_t<T>;
    const T* xp = static_cast<const T*>(x.data_ptr());
    T* yp = static_cast<T*>(y.data_ptr());
    for_each_line(x, [&](int64_t off, int64_t st) {
      Cm mx = -std::numeric_limits<Cm>::infinity();
      for (int64_t k = 0; k < D; ++k) mx = std::max(mx, static_cast<Cm>(xp[off + k * st]));
      // An infinite max (a fully masked line) is not subtracted; the line then
      // comes out NaN, as in PyTorch.
      const Cm shift = std::isinf(mx) ? Cm(0) : mx;
      double sum = 0;
      for (int64_t k = 0; k < D; ++k) sum += static_cast<double>(std::exp(static_cast<Cm>(xp[off + k * st]) - shift));
      if constexpr (kLog) {
        const Cm lse = static_cast<Cm>(std::log(sum)) + shift;
        for (int64_t k = 0; k < D; ++k) yp[off + k * st] = static_cast<T>(static_cast<Cm>(xp[off + k * st]) - lse);
      } else {
        const Cm inv = static_cast<Cm>(1.0 / sum);
        for (int64_t k = 0; k < D; ++k)
          yp[off + k * st] = static_cast<T>(std::exp(static_cast<Cm>(xp[off + k * st]) - shift) * inv);
      }
    });
  });
}

template <bool kLog>
void softmax_backward_kernel(OpCall& call) {
  const Tensor &g = call.in(0), &y = call.in(1), &gx = call.out(0);
  const int64_t D = y.shape()[1];
  visit_floating(y.dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    using Cm = compute_t<T>;
    const T* gp = static_cast<const T*>(g.data_ptr());
    const T* yp = static_cast<const T*>(y.data_ptr());
    T* op = static_cast<T*>(gx.data_ptr());
    for_each_line(y, [&](int64_t off, int64_t st) {
      double dot = 0;
      for (int64_t k = 0; k < D; ++k) {
        const double gv = static_cast<double>(static_cast<Cm>(gp[off + k * st]));
        dot += kLog ? gv : gv * static_cast<double>(static_cast<Cm>(yp[off + k * st]));
      }
      const Cm s = static_cast<Cm>(dot);
      for (int64_t k = 0; k < D; ++k) {
        const int64_t i = off + k * st;
        const Cm gv = static_cast<Cm>(gp[i]), yv = static_cast<Cm>(yp[i]);
        op[i] = static_cast<T>(kLog ? gv - std::exp(yv) * s : yv * (gv - s));
      }
    });
  });
}

HEARTH_REGISTER_CPU_KERNEL(softmax, softmax_forward_kernel<false>, DTypeSet::floating());
HEARTH_REGISTER_CPU_KERNEL(log_softmax, softmax_forward_kernel<true>, DTypeSet::floating());
HEARTH_REGISTER_CPU_KERNEL(softmax_backward, softmax_backward_kernel<false>, DTypeSet::floating());
HEARTH_REGISTER_CPU_KERNEL(log_softmax_backward, softmax_backward_kernel<true>, DTypeSet::floating());

}  // namespace
}  // namespace hearth::cpu
