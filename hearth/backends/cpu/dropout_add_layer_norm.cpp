// Dropout, residual add and layer norm on the CPU (contract in
// hearth/dispatch/schemas/dropout_add_layer_norm.h), the reference: the
// arithmetic of the dropout, add and layer_norm kernels, rounded where each of
// them rounds, with dropout's keep decisions (lane i%4 of philox(offset + i/4)),
// so that the results equal those of the three ops bit for bit. The layer
// norm's row loops are layer_norm.cpp's own (layer_norm_rows.h).
#include "hearth/dispatch/schemas/dropout_add_layer_norm.h"

#include <type_traits>
#include <vector>

#include "hearth/backends/cpu/dropout_keep.h"
#include "hearth/backends/cpu/layer_norm_rows.h"
#include "hearth/backends/cpu/level_kernel_registrar.h"
#include "hearth/backends/cpu/nn_kernel_util.h"
#include "hearth/backends/cpu/parallel.h"

namespace hearth::cpu {
namespace {

// f(TypeTag<X>, TypeTag<T>) for x's dtype X and the residual's T: the same
// dtype, or a half X beside a float32 T.
template <typename F>
void visit_pair(DType xd, DType td, F&& f) {
  visit_floating(xd, [&](auto xtag) {
    using X = typename decltype(xtag)::type;
    if (xd == td) return f(xtag, xtag);
    if constexpr (std::is_same_v<X, BFloat16> || std::is_same_v<X, Half>) {
      if (td == DType::float32) return f(xtag, TypeTag<float>{});
    }
    HEARTH_THROW(TypeError, "[dropout_add_layer_norm] no CPU kernel for x of ", dtype_name(xd),
                 " beside a residual of ", dtype_name(td));
  });
}

void forward_kernel(OpCall& call) {
  const Tensor &x = call.in(0), &res = call.in(1), &sum = call.out(3);
  const auto& a = call.attrs<DropoutAddLayerNormAttrs>();
  const int64_t M = x.shape()[0], K = x.shape()[1];
  const std::vector<double> w = read_doubles(call.in(2)), b = read_doubles(call.in(3));
  visit_pair(x.dtype(), res.dtype(), [&](auto xtag, auto ttag) {
    using X = typename decltype(xtag)::type;
    using T = typename decltype(ttag)::type;
    using Cx = compute_t<X>;
    using Ct = compute_t<T>;
    const X* xp = static_cast<const X*>(x.data_ptr());
    const T* rp = static_cast<const T*>(res.data_ptr());
    T* yp = static_cast<T*>(call.out(0).data_ptr());
    Ct* mp = static_cast<Ct*>(call.out(1).data_ptr());
    Ct* sp_rstd = static_cast<Ct*>(call.out(2).data_ptr());
    T* sp = sum.defined() ? static_cast<T*>(sum.data_ptr()) : nullptr;
    const bool drop = a.p > 0.0;
    const Cx scale = static_cast<Cx>(1.0 / (1.0 - a.p));  // dropout's
    parallel_for(M, layer_norm_row_grain(K), [&](int64_t rb, int64_t re) {
      std::vector<T> scratch(sp ? 0 : K);
      DropoutKeep keep(a.seed, a.offset, a.p);
      for (int64_t r = rb; r < re; ++r) {
        const X* xr = xp + r * K;
        const T* rr = rp + r * K;
        T* sr = sp ? sp + r * K : scratch.data();
        for (int64_t j = 0; j < K; ++j) {
          X d = xr[j];
          if (drop) d = keep(static_cast<uint64_t>(r * K + j)) ? static_cast<X>(static_cast<Cx>(d) * scale) : X(Cx(0));
          sr[j] = static_cast<T>(static_cast<Ct>(static_cast<Ct>(d) + static_cast<Ct>(rr[j])));
        }
        layer_norm_row(sr, yp + r * K, K, w, b, a.eps, mp[r], sp_rstd[r]);
      }
    });
  });
}

void backward_kernel(OpCall& call) {
  const Tensor &g = call.in(0), &sum = call.in(1);
  const Tensor &gx = call.out(0), &gres = call.out(1), &gw = call.out(2), &gb = call.out(3);
  const auto& a = call.attrs<DropoutAddLayerNormAttrs>();
  const int64_t M = sum.shape()[0], K = sum.shape()[1];
  const std::vector<double> w = read_doubles(call.in(4));
  const bool want_params = gw.defined() || gb.defined();
  std::vector<double> sw, sb;
  visit_pair(gx.defined() ? gx.dtype() : sum.dtype(), sum.dtype(), [&](auto xtag, auto ttag) {
    using X = typename decltype(xtag)::type;
    using T = typename decltype(ttag)::type;
    using Cx = compute_t<X>;
    using Ct = compute_t<T>;
    // The sum's gradient goes to the residual's; x's is derived from it row by
    // row, in scratch rows when the residual's is not wanted.
    std::vector<T> scratch(gx.defined() && !gres.defined() ? M * K : 0);
    T* gs = gres.defined() ? static_cast<T*>(gres.data_ptr()) : gx.defined() ? scratch.data() : nullptr;
    X* gxp = gx.defined() ? static_cast<X*>(gx.data_ptr()) : nullptr;
    const bool drop = a.p > 0.0;
    const Cx scale = static_cast<Cx>(1.0 / (1.0 - a.p));
    layer_norm_backward_rows(
        static_cast<const T*>(g.data_ptr()), static_cast<const T*>(sum.data_ptr()),
        static_cast<const Ct*>(call.in(2).data_ptr()), static_cast<const Ct*>(call.in(3).data_ptr()), w, M, K, gs,
        want_params, sw, sb, [&](int64_t r) {
          if (!gxp) return;
          const T* gr = gs + r * K;
          X* out = gxp + r * K;
          DropoutKeep keep(a.seed, a.offset, a.p);
          for (int64_t j = 0; j < K; ++j) {
            const X gv = static_cast<X>(static_cast<Ct>(gr[j]));  // the cast to x's dtype
            out[j] = !drop                                    ? gv
                     : keep(static_cast<uint64_t>(r * K + j)) ? static_cast<X>(static_cast<Cx>(gv) * scale)
                                                              : X(Cx(0));
          }
        });
  });
  if (gw.defined()) write_doubles(gw, sw);
  if (gb.defined()) write_doubles(gb, sb);
}

HEARTH_REGISTER_CPU_KERNEL(dropout_add_layer_norm, forward_kernel, DTypeSet::floating());
HEARTH_REGISTER_CPU_KERNEL(dropout_add_layer_norm_backward, backward_kernel, DTypeSet::floating());

}  // namespace
}  // namespace hearth::cpu
