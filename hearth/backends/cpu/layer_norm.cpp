// Layer norm on the CPU (contract in hearth/dispatch/schemas/layer_norm.h).
// Statistics use two passes accumulated in double, so a large mean does not
// swamp the variance; elementwise work is in compute_t<T>.
#include "hearth/dispatch/schemas/layer_norm.h"

#include <cmath>
#include <vector>

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
    parallel_for(M, std::max<int64_t>(1, 4096 / std::max<int64_t>(K, 1)), [&](int64_t rb, int64_t re) {
      for (int64_t r = rb; r < re; ++r) {
        const T* xr = xp + r * K;
        T* yr = yp + r * K;
        double s = 0;
        for (int64_t j = 0; j < K; ++j) s += static_cast<double>(static_cast<Cm>(xr[j]));
        const double m = s / static_cast<double>(K);
        double ss = 0;
        for (int64_t j = 0; j < K; ++j) {
          const double d = static_cast<double>(static_cast<Cm>(xr[j])) - m;
          ss += d * d;
        }
        const double rstd = 1.0 / std::sqrt(ss / static_cast<double>(K) + eps);
        mp[r] = static_cast<Cm>(m);
        rp[r] = static_cast<Cm>(rstd);
        for (int64_t j = 0; j < K; ++j) {
          double v = (static_cast<double>(static_cast<Cm>(xr[j])) - m) * rstd;
          if (!w.empty()) v *= w[j];
          if (!b.empty()) v += b[j];
          yr[j] = static_cast<T>(static_cast<Cm>(v));
        }
      }
    });
  });
}

// Weight and bias gradients sum over rows. Rows are split into a fixed number
// of blocks (not one per thread), so the summation order, and the result, do
// not depend on the thread count.
constexpr int64_t kMaxRowBlocks = 256;

void layer_norm_backward_kernel(OpCall& call) {
  const Tensor &g = call.in(0), &x = call.in(1);
  const Tensor &gx = call.out(0), &gw = call.out(1), &gb = call.out(2);
  const int64_t M = x.shape()[0], K = x.shape()[1];
  const std::vector<double> w = read_doubles(call.in(4));
  const bool want_params = gw.defined() || gb.defined();
  const int64_t blocks = std::min<int64_t>(M, kMaxRowBlocks);
  std::vector<double> part_gw(want_params ? blocks * K : 0, 0.0), part_gb(want_params ? blocks * K : 0, 0.0);

  visit_floating(x.dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    using Cm = compute_t<T>;
    const T* xp = static_cast<const T*>(x.data_ptr());
    const T* gp = static_cast<const T*>(g.data_ptr());
    const Cm* mp = static_cast<const Cm*>(call.in(2).data_ptr());
    const Cm* rp = static_cast<const Cm*>(call.in(3).data_ptr());
    T* gxp = gx.defined() ? static_cast<T*>(gx.data_ptr()) : nullptr;
    const int64_t block_grain =
        std::max<int64_t>(1, kGrainElementwise / std::max<int64_t>(M / std::max<int64_t>(blocks, 1) * K, 1));
    parallel_for(blocks, block_grain, [&](int64_t bb, int64_t be) {
      std::vector<double> xhat(K), gwv(K);
      for (int64_t blk = bb; blk < be; ++blk) {
        const int64_t r0 = M * blk / blocks, r1 = M * (blk + 1) / blocks;
        double* pgw = want_params ? part_gw.data() + blk * K : nullptr;
        double* pgb = want_params ? part_gb.data() + blk * K : nullptr;
        for (int64_t r = r0; r < r1; ++r) {
          const T* xr = xp + r * K;
          const T* gr = gp + r * K;
          const double m = static_cast<double>(mp[r]), rstd = static_cast<double>(rp[r]);
          double mean_gw = 0, mean_gwx = 0;
          for (int64_t j = 0; j < K; ++j) {
            xhat[j] = (static_cast<double>(static_cast<Cm>(xr[j])) - m) * rstd;
            const double gv = static_cast<double>(static_cast<Cm>(gr[j]));
            gwv[j] = w.empty() ? gv : gv * w[j];
            mean_gw += gwv[j];
            mean_gwx += gwv[j] * xhat[j];
            if (pgw) {
              pgw[j] += gv * xhat[j];
              pgb[j] += gv;
            }
          }
          if (!gxp) continue;
          mean_gw /= static_cast<double>(K);
          mean_gwx /= static_cast<double>(K);
          T* gxr = gxp + r * K;
          for (int64_t j = 0; j < K; ++j)
            gxr[j] = static_cast<T>(static_cast<Cm>(rstd * (gwv[j] - mean_gw - xhat[j] * mean_gwx)));
        }
      }
    });
  });
  if (!want_params) return;
  std::vector<double> sw(K, 0.0), sb(K, 0.0);
  for (int64_t blk = 0; blk < blocks; ++blk)
    for (int64_t j = 0; j < K; ++j) {
      sw[j] += part_gw[blk * K + j];
      sb[j] += part_gb[blk * K + j];
    }
  if (gw.defined()) write_doubles(gw, sw);
  if (gb.defined()) write_doubles(gb, sb);
}

HEARTH_REGISTER_CPU_KERNEL(layer_norm, layer_norm_kernel, DTypeSet::floating());
HEARTH_REGISTER_CPU_KERNEL(layer_norm_backward, layer_norm_backward_kernel, DTypeSet::floating());

}  // namespace
}  // namespace hearth::cpu
