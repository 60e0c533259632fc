// cross_entropy (fused log_softmax + nll, with label smoothing and class
// weights) and nll_loss on the CPU, over dense [M, C] rows. Contracts and the
// exact formulas are in hearth/dispatch/schemas/loss.h.
#include "hearth/dispatch/schemas/loss.h"

#include <cmath>
#include <limits>
#include <vector>

#include "hearth/backends/cpu/nn_kernel_util.h"
#include "hearth/backends/cpu/parallel.h"
#include "hearth/dispatch/registry.h"

namespace hearth::cpu {
namespace {

[[noreturn]] void throw_bad_target(const char* op, int64_t value, int64_t classes, int64_t ignore_index) {
  HEARTH_THROW(ValueError, "[", op, "] target ", value, " is out of bounds: expected a class index in [0, ", classes,
               ") or ignore_index (", ignore_index, ") for ", classes, " classes");
}

int64_t row_grain(int64_t C) { return std::max<int64_t>(1, kGrainElementwise / std::max<int64_t>(C, 1)); }

void cross_entropy_kernel(OpCall& call) {
  const Tensor &x = call.in(0), &target = call.in(1);
  const CrossEntropyAttrs& a = call.attrs<CrossEntropyAttrs>();
  const int64_t M = x.shape()[0], C = x.shape()[1];
  const std::vector<double> w = read_doubles(call.in(2));
  const double ls = a.label_smoothing;
  BadValueFlag bad;
  visit_floating(x.dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    using Cm = compute_t<T>;
    const T* xp = static_cast<const T*>(x.data_ptr());
    Cm* loss = static_cast<Cm*>(call.out(0).data_ptr());
    Cm* lse_out = static_cast<Cm*>(call.out(1).data_ptr());
    Cm* tw = static_cast<Cm*>(call.out(2).data_ptr());
    parallel_for(M, row_grain(C), [&](int64_t rb, int64_t re) {
      for (int64_t r = rb; r < re; ++r) {
        const T* row = xp + r * C;
        const int64_t t = index_at(target, r);
        Cm mx = -std::numeric_limits<Cm>::infinity();
        for (int64_t c = 0; c < C; ++c) mx = std::max(mx, static_cast<Cm>(row[c]));
        const Cm shift = std::isinf(mx) ? Cm(0) : mx;
        double s = 0;
        for (int64_t c = 0; c < C; ++c) s += static_cast<double>(std::exp(static_cast<Cm>(row[c]) - shift));
        const double lse = std::log(s) + static_cast<double>(shift);
        lse_out[r] = static_cast<Cm>(lse);
        if (t == a.ignore_index) {
          loss[r] = Cm(0);
          tw[r] = Cm(0);
          continue;
        }
        if (t < 0 || t >= C) {
          bad.set(t);
          continue;
        }
        const double wt = w.empty() ? 1.0 : w[t];
        double l = (1.0 - ls) * wt * (lse - static_cast<double>(static_cast<Cm>(row[t])));
        if (ls > 0) {
          double smooth = 0;
          for (int64_t c = 0; c < C; ++c)
            smooth += (w.empty() ? 1.0 : w[c]) * (lse - static_cast<double>(static_cast<Cm>(row[c])));
          l += ls / static_cast<double>(C) * smooth;
        }
        loss[r] = static_cast<Cm>(l);
        tw[r] = static_cast<Cm>(wt);
      }
    });
  });
  if (bad.seen()) throw_bad_target("cross_entropy", bad.value(), C, a.ignore_index);
}

void cross_entropy_backward_kernel(OpCall& call) {
  const Tensor &x = call.in(0), &target = call.in(1), &gx = call.out(0);
  const CrossEntropyAttrs& a = call.attrs<CrossEntropyAttrs>();
  const int64_t M = x.shape()[0], C = x.shape()[1];
  const std::vector<double> w = read_doubles(call.in(4));
  const double ls = a.label_smoothing, per_class = ls / static_cast<double>(C);
  double w_sum = static_cast<double>(C);
  if (!w.empty()) {
    w_sum = 0;
    for (double v : w) w_sum += v;
  }
  visit_floating(x.dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    using Cm = compute_t<T>;
    const T* xp = static_cast<const T*>(x.data_ptr());
    const Cm* lse = static_cast<const Cm*>(call.in(2).data_ptr());
    const Cm* gl = static_cast<const Cm*>(call.in(3).data_ptr());
    T* gp = static_cast<T*>(gx.data_ptr());
    parallel_for(M, row_grain(C), [&](int64_t rb, int64_t re) {
      for (int64_t r = rb; r < re; ++r) {
        const T* row = xp + r * C;
        T* grow = gp + r * C;
        const int64_t t = index_at(target, r);
        if (t == a.ignore_index || t < 0 || t >= C) {
          for (int64_t c = 0; c < C; ++c) grow[c] = T(Cm(0));
          continue;
        }
        const double g = static_cast<double>(gl[r]);
        const double wt = w.empty() ? 1.0 : w[t];
        const double coef = (1.0 - ls) * wt + per_class * w_sum;
        for (int64_t c = 0; c < C; ++c) {
          const double p = static_cast<double>(std::exp(static_cast<Cm>(row[c]) - lse[r]));
          double v = coef * p - per_class * (w.empty() ? 1.0 : w[c]);
          if (c == t) v -= (1.0 - ls) * wt;
          grow[c] = static_cast<T>(static_cast<Cm>(g * v));
        }
      }
    });
  });
}

void nll_loss_kernel(OpCall& call) {
  const Tensor &x = call.in(0), &target = call.in(1);
  const int64_t ignore_index = call.attrs<NllLossAttrs>().ignore_index;
  const int64_t M = x.shape()[0], C = x.shape()[1];
  const std::vector<double> w = read_doubles(call.in(2));
  BadValueFlag bad;
  visit_floating(x.dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    using Cm = compute_t<T>;
    const T* xp = static_cast<const T*>(x.data_ptr());
    Cm* loss = static_cast<Cm*>(call.out(0).data_ptr());
    Cm* tw = static_cast<Cm*>(call.out(1).data_ptr());
    parallel_for(M, kGrainElementwise, [&](int64_t rb, int64_t re) {
      for (int64_t r = rb; r < re; ++r) {
        const int64_t t = index_at(target, r);
        loss[r] = tw[r] = Cm(0);
        if (t == ignore_index) continue;
        if (t < 0 || t >= C) {
          bad.set(t);
          continue;
        }
        const double wt = w.empty() ? 1.0 : w[t];
        loss[r] = static_cast<Cm>(-wt * static_cast<double>(static_cast<Cm>(xp[r * C + t])));
        tw[r] = static_cast<Cm>(wt);
      }
    });
  });
  if (bad.seen()) throw_bad_target("nll_loss", bad.value(), C, ignore_index);
}

void nll_loss_backward_kernel(OpCall& call) {
  const Tensor &gl_t = call.in(0), &target = call.in(1), &gx = call.out(0);
  const int64_t ignore_index = call.attrs<NllLossAttrs>().ignore_index;
  const int64_t M = gx.shape()[0], C = gx.shape()[1];
  const std::vector<double> w = read_doubles(call.in(2));
  const std::vector<double> gl = read_doubles(gl_t);
  visit_floating(gx.dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    using Cm = compute_t<T>;
    T* gp = static_cast<T*>(gx.data_ptr());
    parallel_for(M, row_grain(C), [&](int64_t rb, int64_t re) {
      for (int64_t r = rb; r < re; ++r) {
        T* grow = gp + r * C;
        for (int64_t c = 0; c < C; ++c) grow[c] = T(Cm(0));
        const int64_t t = index_at(target, r);
        if (t == ignore_index || t < 0 || t >= C) continue;
        grow[t] = static_cast<T>(static_cast<Cm>(-gl[r] * (w.empty() ? 1.0 : w[t])));
      }
    });
  });
}

HEARTH_REGISTER_KERNEL(cross_entropy, kCpu, cross_entropy_kernel, DTypeSet::floating());
HEARTH_REGISTER_KERNEL(cross_entropy_backward, kCpu, cross_entropy_backward_kernel, DTypeSet::floating());
HEARTH_REGISTER_KERNEL(nll_loss, kCpu, nll_loss_kernel, DTypeSet::floating());
HEARTH_REGISTER_KERNEL(nll_loss_backward, kCpu, nll_loss_backward_kernel, DTypeSet::floating());

}  // namespace
}  // namespace hearth::cpu
