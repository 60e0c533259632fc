// attention_softmax and its backward on the CPU (contracts in
// hearth/dispatch/schemas/attention_softmax.h): softmax(scores * scale + mask) along each
// row, then dropout, in one pass over the rows. The arithmetic is that of the
// softmax and dropout kernels (exponentials in compute_t<T>, sums in double,
// the keep decision of element i from lane i%4 of philox(offset + i/4)), so
// the fused op and the composite it replaces agree.
#include "hearth/dispatch/schemas/attention_softmax.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <vector>

#include "hearth/backends/cpu/dropout_keep.h"
#include "hearth/backends/cpu/nn_kernel_util.h"
#include "hearth/backends/cpu/parallel.h"
#include "hearth/dispatch/registry.h"

namespace hearth::cpu {
namespace {

// Rows per parallel chunk: about kGrainElementwise elements.
int64_t row_grain(int64_t S) { return std::max<int64_t>(1, kGrainElementwise / std::max<int64_t>(S, 1)); }

void attention_softmax_kernel(OpCall& call) {
  const Tensor &x = call.in(0), &mask = call.in(1);
  const Tensor &probs = call.out(0), &y = call.out(1), &keep = call.out(2);
  const AttentionSoftmaxAttrs& a = call.attrs<AttentionSoftmaxAttrs>();
  const int64_t R = x.shape()[0], S = x.shape()[1];
  const bool drop = a.p > 0.0;
  visit_floating(x.dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    using Cm = compute_t<T>;
    const Cm scale = static_cast<Cm>(a.scale), drop_scale = static_cast<Cm>(1.0 / (1.0 - a.p));
    const T* xp = static_cast<const T*>(x.data_ptr());
    // The mask is T, or float32 beside half scores.
    const bool has_mask = mask.defined(), wide_mask = has_mask && mask.dtype() != x.dtype();
    const T* mp = has_mask && !wide_mask ? static_cast<const T*>(mask.data_ptr()) : nullptr;
    const Cm* wp = wide_mask ? static_cast<const Cm*>(mask.data_ptr()) : nullptr;
    T* pp = static_cast<T*>(probs.data_ptr());
    T* yp = drop ? static_cast<T*>(y.data_ptr()) : pp;
    bool* kp = drop ? static_cast<bool*>(keep.data_ptr()) : nullptr;
    parallel_for(R, row_grain(S), [&](int64_t begin, int64_t end) {
      std::vector<Cm> e(static_cast<size_t>(S));
      for (int64_t r = begin; r < end; ++r) {
        const T* xr = xp + r * S;
        const int64_t mo = has_mask ? a.mask_offset(r) : 0;
        Cm mx = -std::numeric_limits<Cm>::infinity();
        for (int64_t c = 0; c < S; ++c) {
          const Cm v = static_cast<Cm>(xr[c]) * scale;
          const int64_t mi = mo + c * a.mask_col_stride;
          e[c] = !has_mask ? v : v + (wide_mask ? wp[mi] : static_cast<Cm>(mp[mi]));
          mx = std::max(mx, e[c]);
        }
        // An infinite max (a row masked with -inf everywhere) is not
        // subtracted; the row then comes out NaN, as softmax's does.
        const Cm shift = std::isinf(mx) ? Cm(0) : mx;
        double sum = 0;
        for (int64_t c = 0; c < S; ++c) sum += static_cast<double>(e[c] = std::exp(e[c] - shift));
        const Cm inv = static_cast<Cm>(1.0 / sum);
        T* yr = yp + r * S;
        for (int64_t c = 0; c < S; ++c) yr[c] = static_cast<T>(e[c] * inv);
        if (!drop) continue;
        T* pr = pp + r * S;
        DropoutKeep keeps(a.seed, a.offset, a.p);
        for (int64_t c = 0; c < S; ++c) {
          const uint64_t i = static_cast<uint64_t>(r * S + c);
          const bool k = keeps(i);
          kp[i] = k;
          pr[c] = k ? static_cast<T>(static_cast<Cm>(yr[c]) * drop_scale) : T(Cm(0));
        }
      }
    });
  });
}

void attention_softmax_backward_kernel(OpCall& call) {
  const Tensor &g = call.in(0), &y = call.in(1), &keep = call.in(2), &gx = call.out(0);
  const AttentionSoftmaxAttrs& a = call.attrs<AttentionSoftmaxAttrs>();
  const int64_t R = y.shape()[0], S = y.shape()[1];
  visit_floating(y.dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    using Cm = compute_t<T>;
    const Cm scale = static_cast<Cm>(a.scale), drop_scale = static_cast<Cm>(1.0 / (1.0 - a.p));
    const T* gp = static_cast<const T*>(g.data_ptr());
    const T* yp = static_cast<const T*>(y.data_ptr());
    const bool* kp = keep.defined() ? static_cast<const bool*>(keep.data_ptr()) : nullptr;
    T* op = static_cast<T*>(gx.data_ptr());
    parallel_for(R, row_grain(S), [&](int64_t begin, int64_t end) {
      std::vector<Cm> gd(static_cast<size_t>(S));  // the gradient before dropout
      for (int64_t r = begin; r < end; ++r) {
        const int64_t base = r * S;
        double dot = 0;
        for (int64_t c = 0; c < S; ++c) {
          const Cm gv = static_cast<Cm>(gp[base + c]);
          gd[c] = !kp ? gv : kp[base + c] ? gv * drop_scale : Cm(0);
          dot += static_cast<double>(gd[c]) * static_cast<double>(static_cast<Cm>(yp[base + c]));
        }
        const Cm s = static_cast<Cm>(dot);
        for (int64_t c = 0; c < S; ++c) {
          const Cm yv = static_cast<Cm>(yp[base + c]);
          op[base + c] = static_cast<T>(scale * (yv * (gd[c] - s)));
        }
      }
    });
  });
}

HEARTH_REGISTER_KERNEL(attention_softmax, kCpu, attention_softmax_kernel, DTypeSet::floating());
HEARTH_REGISTER_KERNEL(attention_softmax_backward, kCpu, attention_softmax_backward_kernel, DTypeSet::floating());

}  // namespace
}  // namespace hearth::cpu
