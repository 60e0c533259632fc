// Dropout on the CPU. The keep decision for element i follows the uniform
// float32 mapping of hearth/dispatch/schemas/random.h (lane i%4 of
// philox(offset + i/4)) for every dtype, so any backend drops the same elements.
#include "hearth/dispatch/schemas/dropout.h"

#include "hearth/backends/cpu/dropout_keep.h"
#include "hearth/backends/cpu/nn_kernel_util.h"
#include "hearth/backends/cpu/parallel.h"
#include "hearth/core/generator.h"
#include "hearth/dispatch/registry.h"

namespace hearth::cpu {
namespace {

void dropout_kernel(OpCall& call) {
  const Tensor &x = call.in(0), &y = call.out(0), &mask = call.out(1);
  const DropoutAttrs& a = call.attrs<DropoutAttrs>();
  const int64_t n = x.numel();
  visit_floating(x.dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    using Cm = compute_t<T>;
    const Cm scale = static_cast<Cm>(1.0 / (1.0 - a.p));
    const T* xp = static_cast<const T*>(x.data_ptr());
    T* yp = static_cast<T*>(y.data_ptr());
    bool* mp = static_cast<bool*>(mask.data_ptr());
    parallel_for((n + 3) / 4, 2048, [&](int64_t b, int64_t e) {
      for (int64_t c = b; c < e; ++c) {
        const auto r = philox4x32(a.offset + c, 0, a.seed);
        for (int64_t k = 0; k < 4 && 4 * c + k < n; ++k) {
          const int64_t i = 4 * c + k;
          const bool keep = dropout_keeps(r[k], a.p);
          mp[i] = keep;
          yp[i] = keep ? static_cast<T>(static_cast<Cm>(xp[i]) * scale) : T(Cm(0));
        }
      }
    });
  });
}

void dropout_backward_kernel(OpCall& call) {
  const Tensor &g = call.in(0), &mask = call.in(1), &gx = call.out(0);
  const double p = call.attrs<DropoutAttrs>().p;
  const int64_t n = g.numel();
  visit_floating(g.dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    using Cm = compute_t<T>;
    const Cm scale = static_cast<Cm>(1.0 / (1.0 - p));
    const T* gp = static_cast<const T*>(g.data_ptr());
    const bool* mp = static_cast<const bool*>(mask.data_ptr());
    T* op = static_cast<T*>(gx.data_ptr());
    parallel_for(n, kGrainElementwise, [&](int64_t b, int64_t e) {
      for (int64_t i = b; i < e; ++i) op[i] = mp[i] ? static_cast<T>(static_cast<Cm>(gp[i]) * scale) : T(Cm(0));
    });
  });
}

HEARTH_REGISTER_KERNEL(dropout, kCpu, dropout_kernel, DTypeSet::floating());
HEARTH_REGISTER_KERNEL(dropout_backward, kCpu, dropout_backward_kernel, DTypeSet::floating());

}  // namespace
}  // namespace hearth::cpu
