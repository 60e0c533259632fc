// fused_attention and its backward on the CPU (contracts in
// hearth/dispatch/schemas/fused_attention.h): the reference the CUDA kernels
// are tested against, written as the definition reads. Each (batch, head)
// pair is one task: its rows of scores live only while one query row is
// worked on, as a fused kernel's tile does, and its key and value gradients
// accumulate without sharing. Products and the softmax run in compute_t<T>
// (float for the half types), sums of exponentials in double, and the weights
// and their gradients are rounded to T before the products that read them, as
// the composite's matmuls of T tensors would. Dropout keeps element i as
// dropout does, so on the CPU the fused op drops what the composite drops.
//
// scaled_dot_product_attention does not take this kernel (its check says no):
// the composite's products through OpenBLAS are much faster than these loops.
#include "hearth/dispatch/schemas/fused_attention.h"

#include <algorithm>
#include <cmath>
#include <vector>

#include "hearth/backends/cpu/dropout_keep.h"
#include "hearth/backends/cpu/nn_kernel_util.h"
#include "hearth/backends/cpu/parallel.h"
#include "hearth/dispatch/registry.h"

namespace hearth::cpu {
namespace {

// A [B, H, rows, D] tensor's elements by index, through its strides (a dim
// of size 1 is read broadcast: the mask's).
template <typename T>
struct View4 {
  T* data;
  int64_t s0, s1, s2, s3, D;
  explicit View4(const Tensor& t)
      : data(static_cast<T*>(t.data_ptr())),
        s0(t.size(0) == 1 ? 0 : t.strides()[0]),
        s1(t.size(1) == 1 ? 0 : t.strides()[1]),
        s2(t.size(2) == 1 ? 0 : t.strides()[2]),
        s3(t.strides()[3]),
        D(t.size(3)) {}
  T* row(int64_t b, int64_t h, int64_t r) const { return data + b * s0 + h * s1 + r * s2; }
};

// Query row l's scores against every key, x[s] = scale * (q[l] . k[s]) + mask[l, s], in Cm.
template <typename T, typename Cm>
void row_scores(const View4<const T>& q, const View4<const T>& k, const Tensor& mask, int64_t b, int64_t h, int64_t l,
                Cm scale, std::vector<Cm>& x) {
  const T* qr = q.row(b, h, l);
  const int64_t D = q.D;
  const T* mr = nullptr;
  int64_t mask_stride = 0;
  if (mask.defined()) {
    const View4<const T> m(mask);
    mr = m.row(b, 0, l);
    mask_stride = m.s3;
  }
  for (size_t s = 0; s < x.size(); ++s) {
    const T* kr = k.row(b, h, static_cast<int64_t>(s));
    Cm dot = 0;
    for (int64_t d = 0; d < D; ++d) dot += static_cast<Cm>(qr[d * q.s3]) * static_cast<Cm>(kr[d * k.s3]);
    x[s] = dot * scale + (mr ? static_cast<Cm>(mr[static_cast<int64_t>(s) * mask_stride]) : Cm(0));
  }
}

struct Dims {
  int64_t B, H, L, S, D, Dv;
};

Dims dims_of(const Tensor& q, const Tensor& v) {
  return {q.size(0), q.size(1), q.size(2), v.size(2), q.size(3), v.size(3)};
}

void fused_attention_kernel(OpCall& call) {
  const Tensor &q = call.in(0), &k = call.in(1), &v = call.in(2), &mask = call.in(3);
  const Tensor &out = call.out(0), &lse = call.out(1), &rng = call.out(2);
  const FusedAttentionAttrs& a = call.attrs<FusedAttentionAttrs>();
  const Dims n = dims_of(q, v);
  const bool drop = a.p > 0.0;
  if (rng.defined()) {
    int64_t* r = static_cast<int64_t*>(rng.data_ptr());
    r[0] = static_cast<int64_t>(a.seed);
    r[1] = static_cast<int64_t>(a.offset);
  }
  visit_floating(q.dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    using Cm = compute_t<T>;
    const View4<const T> qv(q), kv(k), vv(v);
    const View4<T> ov(out);
    Cm* lp = lse.defined() ? static_cast<Cm*>(lse.data_ptr()) : nullptr;
    const Cm scale = static_cast<Cm>(a.scale), drop_scale = static_cast<Cm>(1.0 / (1.0 - a.p));
    parallel_for(n.B * n.H, 1, [&](int64_t begin, int64_t end) {
      std::vector<Cm> x(static_cast<size_t>(n.S)), acc(static_cast<size_t>(n.Dv));
      DropoutKeep keep(a.seed, a.offset, a.p);
      for (int64_t bh = begin; bh < end; ++bh) {
        const int64_t b = bh / n.H, h = bh % n.H;
        for (int64_t l = 0; l < n.L; ++l) {
          row_scores<T, Cm>(qv, kv, mask, b, h, l, scale, x);
          const Cm mx = *std::max_element(x.begin(), x.end());
          // An infinite max (scores of inf or NaN) is not subtracted; the row comes out NaN, as softmax's does.
          const Cm shift = std::isinf(mx) ? Cm(0) : mx;
          double sum = 0;
          for (Cm& e : x) sum += static_cast<double>(e = std::exp(e - shift));
          if (lp) lp[(b * n.H + h) * n.L + l] = static_cast<Cm>(static_cast<double>(shift) + std::log(sum));
          const Cm inv = static_cast<Cm>(1.0 / sum);
          std::fill(acc.begin(), acc.end(), Cm(0));
          for (int64_t s = 0; s < n.S; ++s) {
            Cm w = x[s] * inv;
            if (drop) w = keep(static_cast<uint64_t>(((b * n.H + h) * n.L + l) * n.S + s)) ? w * drop_scale : 0;
            const Cm wt = static_cast<Cm>(static_cast<T>(w));
            const T* vr = vv.row(b, h, s);
            for (int64_t e = 0; e < n.Dv; ++e) acc[e] += wt * static_cast<Cm>(vr[e * vv.s3]);
          }
          T* orow = ov.row(b, h, l);
          for (int64_t e = 0; e < n.Dv; ++e) orow[e * ov.s3] = static_cast<T>(acc[e]);
        }
      }
    });
  });
}

void fused_attention_backward_kernel(OpCall& call) {
  const Tensor &go = call.in(0), &q = call.in(1), &k = call.in(2), &v = call.in(3), &out = call.in(4);
  const Tensor &lse = call.in(5), &mask = call.in(6), &rng = call.in(7);
  const Tensor &gq = call.out(0), &gk = call.out(1), &gv = call.out(2);
  const FusedAttentionAttrs& a = call.attrs<FusedAttentionAttrs>();
  const Dims n = dims_of(q, v);
  const bool drop = a.p > 0.0;
  const uint64_t seed = drop ? static_cast<uint64_t>(static_cast<const int64_t*>(rng.data_ptr())[0]) : 0;
  const uint64_t offset = drop ? static_cast<uint64_t>(static_cast<const int64_t*>(rng.data_ptr())[1]) : 0;
  visit_floating(q.dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    using Cm = compute_t<T>;
    const View4<const T> gov(go), qv(q), kv(k), vv(v), ov(out);
    const View4<T> gqv(gq), gkv(gk), gvv(gv);
    const Cm* lp = static_cast<const Cm*>(lse.data_ptr());
    const Cm scale = static_cast<Cm>(a.scale), drop_scale = static_cast<Cm>(1.0 / (1.0 - a.p));
    parallel_for(n.B * n.H, 1, [&](int64_t begin, int64_t end) {
      std::vector<Cm> x(static_cast<size_t>(n.S)), ds(static_cast<size_t>(n.S));
      std::vector<Cm> dk(static_cast<size_t>(n.S * n.D)), dv(static_cast<size_t>(n.S * n.Dv));
      std::vector<Cm> dq(static_cast<size_t>(n.D));
      DropoutKeep keep(seed, offset, a.p);
      for (int64_t bh = begin; bh < end; ++bh) {
        const int64_t b = bh / n.H, h = bh % n.H;
        std::fill(dk.begin(), dk.end(), Cm(0));
        std::fill(dv.begin(), dv.end(), Cm(0));
        for (int64_t l = 0; l < n.L; ++l) {
          const T* qr = qv.row(b, h, l);
          const T* gor = gov.row(b, h, l);
          row_scores<T, Cm>(qv, kv, mask, b, h, l, scale, x);
          const Cm row_lse = lp[(b * n.H + h) * n.L + l];
          Cm dsum = 0;
          const T* orow = ov.row(b, h, l);
          for (int64_t e = 0; e < n.Dv; ++e)
            dsum += static_cast<Cm>(gor[e * gov.s3]) * static_cast<Cm>(orow[e * ov.s3]);
          for (int64_t s = 0; s < n.S; ++s) {
            const Cm w = std::exp(x[s] - row_lse);
            const bool kept = !drop || keep(static_cast<uint64_t>(((b * n.H + h) * n.L + l) * n.S + s));
            const Cm wd = static_cast<Cm>(static_cast<T>(!drop ? w : kept ? w * drop_scale : Cm(0)));
            const T* vr = vv.row(b, h, s);
            Cm dw = 0;
            for (int64_t e = 0; e < n.Dv; ++e) {
              const Cm g = static_cast<Cm>(gor[e * gov.s3]);
              dv[s * n.Dv + e] += wd * g;
              dw += g * static_cast<Cm>(vr[e * vv.s3]);
            }
            if (drop) dw = kept ? dw * drop_scale : Cm(0);
            ds[s] = static_cast<Cm>(static_cast<T>(scale * (w * (dw - dsum))));
          }
          std::fill(dq.begin(), dq.end(), Cm(0));
          for (int64_t s = 0; s < n.S; ++s) {
            const T* kr = kv.row(b, h, s);
            for (int64_t d = 0; d < n.D; ++d) {
              dq[d] += ds[s] * static_cast<Cm>(kr[d * kv.s3]);
              dk[s * n.D + d] += ds[s] * static_cast<Cm>(qr[d * qv.s3]);
            }
          }
          T* gqr = gqv.row(b, h, l);
          for (int64_t d = 0; d < n.D; ++d) gqr[d * gqv.s3] = static_cast<T>(dq[d]);
        }
        for (int64_t s = 0; s < n.S; ++s) {
          T* gkr = gkv.row(b, h, s);
          T* gvr = gvv.row(b, h, s);
          for (int64_t d = 0; d < n.D; ++d) gkr[d * gkv.s3] = static_cast<T>(dk[s * n.D + d]);
          for (int64_t e = 0; e < n.Dv; ++e) gvr[e * gvv.s3] = static_cast<T>(dv[s * n.Dv + e]);
        }
      }
    });
  });
}

// Never taken over from the composite (see the top of the file); the op runs
// this kernel only when called directly.
bool fused_attention_check(const OpCall&) { return false; }

HEARTH_REGISTER_KERNEL(fused_attention, kCpu, fused_attention_kernel, DTypeSet::floating());
HEARTH_REGISTER_KERNEL_CHECK(fused_attention, kCpu, fused_attention_check);
HEARTH_REGISTER_KERNEL(fused_attention_backward, kCpu, fused_attention_backward_kernel, DTypeSet::floating());

}  // namespace
}  // namespace hearth::cpu
