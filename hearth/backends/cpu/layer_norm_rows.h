// The row loops of the CPU layer norm, shared by layer_norm.cpp and the fused
// kernels that end in a layer norm (dropout_add_layer_norm.cpp), so that both
// compute the same bits. Statistics use two passes accumulated in double, so a
// large mean does not swamp the variance; elementwise work is in double,
// rounded through compute_t<T>.
//
// In an unnamed namespace: the files including it are compiled once per CPU
// level (cmake/cpu_dispatch.cmake), and each copy must keep its own code
// rather than share one the linker picked from another level.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <vector>

#include "hearth/backends/cpu/elementwise_util.h"
#include "hearth/backends/cpu/parallel.h"

namespace hearth::cpu {
namespace {

// One row of K elements: y = (x - mean) * rstd * w + b (w, b empty when absent).
template <typename T>
void layer_norm_row(const T* xr, T* yr, int64_t K, const std::vector<double>& w, const std::vector<double>& b,
                    double eps, compute_t<T>& mean_out, compute_t<T>& rstd_out) {
  using Cm = compute_t<T>;
  double s = 0;
  for (int64_t j = 0; j < K; ++j) s += static_cast<double>(static_cast<Cm>(xr[j]));
  const double m = s / static_cast<double>(K);
  double ss = 0;
  for (int64_t j = 0; j < K; ++j) {
    const double d = static_cast<double>(static_cast<Cm>(xr[j])) - m;
    ss += d * d;
  }
  const double rstd = 1.0 / std::sqrt(ss / static_cast<double>(K) + eps);
  mean_out = static_cast<Cm>(m);
  rstd_out = static_cast<Cm>(rstd);
  for (int64_t j = 0; j < K; ++j) {
    double v = (static_cast<double>(static_cast<Cm>(xr[j])) - m) * rstd;
    if (!w.empty()) v *= w[j];
    if (!b.empty()) v += b[j];
    yr[j] = static_cast<T>(static_cast<Cm>(v));
  }
}

// Rows per parallel task of the forward: about 4096 elements.
inline int64_t layer_norm_row_grain(int64_t K) { return std::max<int64_t>(1, 4096 / std::max<int64_t>(K, 1)); }

// Weight and bias gradients sum over rows. Rows are split into a fixed number
// of blocks (not one per thread), so the summation order, and the result, do
// not depend on the thread count.
constexpr int64_t kLayerNormRowBlocks = 256;

// The backward of M rows of K: g and x [M, K], mean and rstd [M], w [K] or
// empty. Writes gx [M, K] when gxp is not null, calling on_row(r) after each
// row of it; with want_params, sums g * xhat into sw and g into sb (both [K]).
template <typename T, typename OnRow>
void layer_norm_backward_rows(const T* gp, const T* xp, const compute_t<T>* mp, const compute_t<T>* rp,
                              const std::vector<double>& w, int64_t M, int64_t K, T* gxp, bool want_params,
                              std::vector<double>& sw, std::vector<double>& sb, OnRow&& on_row) {
  using Cm = compute_t<T>;
  const int64_t blocks = std::min<int64_t>(M, kLayerNormRowBlocks);
  std::vector<double> part_gw(want_params ? blocks * K : 0, 0.0), part_gb(want_params ? blocks * K : 0, 0.0);
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
        on_row(r);
      }
    }
  });
  if (!want_params) return;
  sw.assign(K, 0.0);
  sb.assign(K, 0.0);
  for (int64_t blk = 0; blk < blocks; ++blk)
    for (int64_t j = 0; j < K; ++j) {
      sw[j] += part_gw[blk * K + j];
      sb[j] += part_gb[blk * K + j];
    }
}

}  // namespace
}  // namespace hearth::cpu
