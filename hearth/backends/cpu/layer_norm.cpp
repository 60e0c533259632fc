// Layer norm on the CPU (contract in hearth/dispatch/schemas/layer_norm.h).
// The row loops are in layer_norm_rows.h: statistics in two passes accumulated
// in double, elementwise work in compute_t<T>.
#include "hearth/dispatch/schemas/layer_norm.h"

#include <vector>

#include "hearth/backends/cpu/layer_norm_rows.h"
#include "hearth/backends/cpu/level_kernel_registrar.h"
#include "hearth/backends/cpu/nn_kernel_util.h"
#include "hearth/backends/cpu/parallel.h"

namespace hearth::cpu {
namespace {

// x [M, K], statistics per row.

void layer_norm_kernel(OpCall& call) {
  const Tensor& x = call.in(0);
  const double eps = call.attrs<LayerNormAttrs>().eps;
  const int64_t M = x.shape()[0], K = x.shape()[1];
  const std::vector<double> w = read_doubles(call.in(1)), b = read_doubles(call.in(2));
  visit_floating(x.dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    using Cm = compute_t<T>;
    const T* xp = static_cast<const T*>(x.data_ptr());
    T* yp = static_cast<T*>(call.out(0).data_ptr());
    Cm* mp = static_cast<Cm*>(call.out(1).data_ptr());
    Cm* rp = static_cast<Cm*>(call.out(2).data_ptr());
    parallel_for(M, layer_norm_row_grain(K), [&](int64_t rb, int64_t re) {
      for (int64_t r = rb; r < re; ++r) layer_norm_row(xp + r * K, yp + r * K, K, w, b, eps, mp[r], rp[r]);
    });
  });
}

void layer_norm_backward_kernel(OpCall& call) {
  const Tensor &g = call.in(0), &x = call.in(1);
  const Tensor &gx = call.out(0), &gw = call.out(1), &gb = call.out(2);
  const int64_t M = x.shape()[0], K = x.shape()[1];
  const std::vector<double> w = read_doubles(call.in(4));
  const bool want_params = gw.defined() || gb.defined();
  std::vector<double> sw, sb;
  visit_floating(x.dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    using Cm = compute_t<T>;
    layer_norm_backward_rows(static_cast<const T*>(g.data_ptr()), static_cast<const T*>(x.data_ptr()),
                             static_cast<const Cm*>(call.in(2).data_ptr()),
                             static_cast<const Cm*>(call.in(3).data_ptr()), w, M, K,
                             gx.defined() ? static_cast<T*>(gx.data_ptr()) : nullptr, want_params, sw, sb,
                             [](int64_t) {});
  });
  if (gw.defined()) write_doubles(gw, sw);
  if (gb.defined()) write_doubles(gb, sb);
}

HEARTH_REGISTER_CPU_KERNEL(layer_norm, layer_norm_kernel, DTypeSet::floating());
HEARTH_REGISTER_CPU_KERNEL(layer_norm_backward, layer_norm_backward_kernel, DTypeSet::floating());

}  // namespace
}  // namespace hearth::cpu
