// Batch norm on the CPU (contract in hearth/dispatch/schemas/batch_norm.h).
// Statistics use two passes accumulated in double, so a large mean does not
// swamp the variance; elementwise work is in compute_t<T>.
#include "hearth/dispatch/schemas/batch_norm.h"

#include <algorithm>
#include <cmath>
#include <vector>

#include "hearth/backends/cpu/level_kernel_registrar.h"
#include "hearth/backends/cpu/nn_kernel_util.h"
#include "hearth/backends/cpu/parallel.h"

namespace hearth::cpu {
namespace {

// x [N, C, S], per-channel statistics over N and S.

// Channels per thread chunk so each chunk has enough elements to pay for a thread.
int64_t channel_grain(int64_t N, int64_t S) {
  return std::max<int64_t>(1, kGrainElementwise / std::max<int64_t>(N * S, 1));
}

void batch_norm_kernel(OpCall& call) {
  const Tensor& x = call.in(0);
  const Tensor &running_mean = call.in(1), &running_var = call.in(2);
  const BatchNormAttrs& a = call.attrs<BatchNormAttrs>();
  const int64_t N = x.shape()[0], C = x.shape()[1], S = x.shape()[2];
  const int64_t count = N * S;
  const std::vector<double> w = read_doubles(call.in(3)), b = read_doubles(call.in(4));
  std::vector<double> mean(C), invstd(C), unbiased(C);

  visit_floating(x.dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    using Cm = compute_t<T>;
    const T* xp = static_cast<const T*>(x.data_ptr());
    T* yp = static_cast<T*>(call.out(0).data_ptr());
    const T* resp = call.in(5).defined() ? static_cast<const T*>(call.in(5).data_ptr()) : nullptr;
    if (a.training) {
      // A thread takes a block of channels and walks the rows once per pass,
      // each channel's sum in (n, i) order as before: a channels-fastest image
      // ([N*H*W, C, 1]) is then read in memory order, not once per channel
      // with a stride of C.
      parallel_for(C, channel_grain(N, S), [&](int64_t cb, int64_t ce) {
        std::vector<double> s(static_cast<size_t>(ce - cb), 0.0), ss(s.size(), 0.0);
        for (int64_t n = 0; n < N; ++n)
          for (int64_t c = cb; c < ce; ++c) {
            const T* row = xp + (n * C + c) * S;
            double& acc = s[static_cast<size_t>(c - cb)];
            for (int64_t i = 0; i < S; ++i) acc += static_cast<double>(static_cast<Cm>(row[i]));
          }
        for (int64_t c = cb; c < ce; ++c) mean[c] = s[static_cast<size_t>(c - cb)] / static_cast<double>(count);
        for (int64_t n = 0; n < N; ++n)
          for (int64_t c = cb; c < ce; ++c) {
            const T* row = xp + (n * C + c) * S;
            const double m = mean[c];
            double& acc = ss[static_cast<size_t>(c - cb)];
            for (int64_t i = 0; i < S; ++i) {
              const double d = static_cast<double>(static_cast<Cm>(row[i])) - m;
              acc += d * d;
            }
          }
        for (int64_t c = cb; c < ce; ++c) {
          const double v = ss[static_cast<size_t>(c - cb)];
          invstd[c] = 1.0 / std::sqrt(v / static_cast<double>(count) + a.eps);
          unbiased[c] = count > 1 ? v / static_cast<double>(count - 1) : 0.0;
        }
      });
    } else {
      const std::vector<double> rm = read_doubles(running_mean), rv = read_doubles(running_var);
      for (int64_t c = 0; c < C; ++c) {
        mean[c] = rm[c];
        invstd[c] = 1.0 / std::sqrt(rv[c] + a.eps);
      }
    }
    // y = x * scale + shift per channel; a residual is added to y rounded to T,
    // as add(batch_norm(x), residual) would.
    std::vector<Cm> scale(C), shift(C);
    for (int64_t c = 0; c < C; ++c) {
      const double sc = invstd[c] * (w.empty() ? 1.0 : w[c]);
      scale[c] = static_cast<Cm>(sc);
      shift[c] = static_cast<Cm>((b.empty() ? 0.0 : b[c]) - mean[c] * sc);
    }
    if (call.out(3).defined()) {  // the map, for backends that recompute the ReLU's mask from it
      Cm* ap = static_cast<Cm*>(call.out(3).data_ptr());
      std::copy(scale.begin(), scale.end(), ap);
      std::copy(shift.begin(), shift.end(), ap + C);
    }
    parallel_for(N * C, std::max<int64_t>(1, kGrainElementwise / std::max<int64_t>(S, 1)), [&](int64_t rb, int64_t re) {
      for (int64_t r = rb; r < re; ++r) {
        const int64_t c = r % C;
        const T* xr = xp + r * S;
        const T* rr = resp ? resp + r * S : nullptr;
        T* yr = yp + r * S;
        for (int64_t i = 0; i < S; ++i) {
          T v = static_cast<T>(static_cast<Cm>(xr[i]) * scale[c] + shift[c]);
          if (rr) v = static_cast<T>(static_cast<Cm>(v) + static_cast<Cm>(rr[i]));
          yr[i] = a.relu && !(static_cast<Cm>(v) > Cm(0)) ? static_cast<T>(Cm(0)) : v;
        }
      }
    });
  });

  write_doubles(call.out(1), mean);
  write_doubles(call.out(2), invstd);
  if (a.training && running_mean.defined()) {
    std::vector<double> rm = read_doubles(running_mean);
    for (int64_t c = 0; c < C; ++c) rm[c] = (1.0 - a.momentum) * rm[c] + a.momentum * mean[c];
    write_doubles(running_mean, rm);
  }
  if (a.training && running_var.defined()) {
    std::vector<double> rv = read_doubles(running_var);
    for (int64_t c = 0; c < C; ++c) rv[c] = (1.0 - a.momentum) * rv[c] + a.momentum * unbiased[c];
    write_doubles(running_var, rv);
  }
  if (a.training && call.in(6).defined()) ++*static_cast<int64_t*>(call.in(6).data_ptr());
}

void batch_norm_backward_kernel(OpCall& call) {
  const Tensor &g = call.in(0), &x = call.in(1);
  const BatchNormAttrs& a = call.attrs<BatchNormAttrs>();
  const Tensor &gx = call.out(0), &gw = call.out(1), &gb = call.out(2), &gr = call.out(3);
  const int64_t N = x.shape()[0], C = x.shape()[1], S = x.shape()[2];
  const double count = static_cast<double>(N * S);
  const std::vector<double> mean = read_doubles(call.in(2)), invstd = read_doubles(call.in(3));
  const std::vector<double> w = read_doubles(call.in(4));
  std::vector<double> sum_g(C), sum_gxhat(C);

  visit_floating(x.dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    using Cm = compute_t<T>;
    const T* xp = static_cast<const T*>(x.data_ptr());
    const T* gp = static_cast<const T*>(g.data_ptr());
    const T* yp = a.relu ? static_cast<const T*>(call.in(5).data_ptr()) : nullptr;
    // The fused ReLU's gradient: grad_y where the output is positive, else 0.
    auto clipped = [&](int64_t i) { return yp && !(static_cast<Cm>(yp[i]) > Cm(0)); };
    auto grad_at = [&](int64_t i) { return clipped(i) ? 0.0 : static_cast<double>(static_cast<Cm>(gp[i])); };
    T* gxp = gx.defined() ? static_cast<T*>(gx.data_ptr()) : nullptr;
    // The residual's gradient: the masked grad_y, exact in T.
    T* grp = gr.defined() ? static_cast<T*>(gr.data_ptr()) : nullptr;
    // Channel blocks walking the rows in memory order, each channel's sums in
    // (n, i) order (see the forward).
    parallel_for(C, channel_grain(N, S), [&](int64_t cb, int64_t ce) {
      std::vector<double> sg(static_cast<size_t>(ce - cb), 0.0), sgx(sg.size(), 0.0);
      if (S == 1) {
        // Channels fastest: each row's block of channels in one loop without
        // calls or aliasing, which the compiler vectorises; the same
        // arithmetic, each channel's sums in row order.
        double* __restrict a0 = sg.data();
        double* __restrict a1 = sgx.data();
        const double* __restrict m = mean.data() + cb;
        const int64_t width = ce - cb;
        for (int64_t n = 0; n < N; ++n) {
          const T* __restrict gr = gp + n * C + cb;
          const T* __restrict xr = xp + n * C + cb;
          const T* __restrict yr = yp ? yp + n * C + cb : nullptr;
          T* __restrict rr = grp ? grp + n * C + cb : nullptr;
          for (int64_t j = 0; j < width; ++j) {
            const bool cut = yr && !(static_cast<Cm>(yr[j]) > Cm(0));
            const double gv = cut ? 0.0 : static_cast<double>(static_cast<Cm>(gr[j]));
            if (rr) rr[j] = cut ? static_cast<T>(Cm(0)) : gr[j];
            a0[j] += gv;
            a1[j] += gv * (static_cast<double>(static_cast<Cm>(xr[j])) - m[j]);
          }
        }
      } else {
        for (int64_t n = 0; n < N; ++n)
          for (int64_t c = cb; c < ce; ++c) {
            const int64_t base = (n * C + c) * S;
            const double m = mean[c];
            double &a0 = sg[static_cast<size_t>(c - cb)], &a1 = sgx[static_cast<size_t>(c - cb)];
            for (int64_t i = 0; i < S; ++i) {
              const double gv = grad_at(base + i);
              if (grp) grp[base + i] = clipped(base + i) ? static_cast<T>(Cm(0)) : gp[base + i];
              a0 += gv;
              a1 += gv * (static_cast<double>(static_cast<Cm>(xp[base + i])) - m);
            }
          }
      }
      for (int64_t c = cb; c < ce; ++c) {
        sum_g[c] = sg[static_cast<size_t>(c - cb)];
        sum_gxhat[c] = sgx[static_cast<size_t>(c - cb)] * invstd[c];
      }
      if (!gxp) return;
      // Training: the batch statistics depend on x, which subtracts the mean
      // gradient and its projection on xhat.
      std::vector<double> k(sg.size()), mg(sg.size()), mgx(sg.size());
      for (int64_t c = cb; c < ce; ++c) {
        const size_t j = static_cast<size_t>(c - cb);
        k[j] = invstd[c] * (w.empty() ? 1.0 : w[c]);
        mg[j] = a.training ? sum_g[c] / count : 0.0;
        mgx[j] = a.training ? sum_gxhat[c] / count : 0.0;
      }
      if (S == 1) {
        const double* __restrict m = mean.data() + cb;
        const double* __restrict is = invstd.data() + cb;
        const int64_t width = ce - cb;
        for (int64_t n = 0; n < N; ++n) {
          const T* __restrict gr = gp + n * C + cb;
          const T* __restrict xr = xp + n * C + cb;
          const T* __restrict yr = yp ? yp + n * C + cb : nullptr;
          T* __restrict out = gxp + n * C + cb;
          for (int64_t j = 0; j < width; ++j) {
            const double xhat = (static_cast<double>(static_cast<Cm>(xr[j])) - m[j]) * is[j];
            const bool cut = yr && !(static_cast<Cm>(yr[j]) > Cm(0));
            const double gv = cut ? 0.0 : static_cast<double>(static_cast<Cm>(gr[j]));
            out[j] = static_cast<T>(static_cast<Cm>(k[j] * (gv - mg[j] - xhat * mgx[j])));
          }
        }
        return;
      }
      for (int64_t n = 0; n < N; ++n)
        for (int64_t c = cb; c < ce; ++c) {
          const int64_t base = (n * C + c) * S;
          const size_t j = static_cast<size_t>(c - cb);
          for (int64_t i = 0; i < S; ++i) {
            const double xhat = (static_cast<double>(static_cast<Cm>(xp[base + i])) - mean[c]) * invstd[c];
            const double gv = grad_at(base + i);
            gxp[base + i] = static_cast<T>(static_cast<Cm>(k[j] * (gv - mg[j] - xhat * mgx[j])));
          }
        }
    });
  });
  if (gw.defined()) write_doubles(gw, sum_gxhat);
  if (gb.defined()) write_doubles(gb, sum_g);
}

// The fused forms: the same kernel, which reads the ReLU from the attributes
// and the residual from input 5.
HEARTH_REGISTER_CPU_KERNEL(batch_norm, batch_norm_kernel, DTypeSet::floating());
HEARTH_REGISTER_CPU_KERNEL(batch_norm_relu, batch_norm_kernel, DTypeSet::floating());
HEARTH_REGISTER_CPU_KERNEL(batch_norm_add_relu, batch_norm_kernel, DTypeSet::floating());
HEARTH_REGISTER_CPU_KERNEL(batch_norm_backward, batch_norm_backward_kernel, DTypeSet::floating());

}  // namespace
}  // namespace hearth::cpu
