// conv2d forward and backward on the CPU. Where oneDNN is built in, float32
// (and bfloat16 on CPUs that compute it natively) goes through its primitives
// (onednn/convolution.cpp, compiled once: oneDNN chooses its instruction set
// at run time itself); what remains here, compiled once per CPU level, is the
// reference, which every other dtype, and every call under cpu_reference.h's
// switch, takes: im2col + OpenBLAS GEMM per (image, group); 1x1 stride-1
// unpadded convolutions skip im2col (the image already is the column matrix).
// With enough (image, group) items each OpenMP thread takes whole items,
// im2col and GEMM, with its own column buffer: no synchronisation inside an
// item, and im2col runs in parallel as well. Otherwise items run in turn, with
// im2col and each GEMM split over the threads.
#include "hearth/dispatch/schemas/conv2d.h"

#include <algorithm>
#include <memory>
#include <vector>

#include "hearth/backends/cpu/elementwise_util.h"
#include "hearth/backends/cpu/gemm.h"
#include "hearth/backends/cpu/half_convert.h"
#include "hearth/backends/cpu/im2col.h"
#include "hearth/backends/cpu/level_kernel_registrar.h"
#include "hearth/backends/cpu/onednn/onednn.h"
#include "hearth/backends/cpu/parallel.h"
#include "hearth/backends/cpu/strided_loop.h"
#include "hearth/dispatch/nchw_detour.h"

#ifdef _OPENMP
#include <omp.h>
#endif

namespace hearth::cpu {
namespace {

ConvGeom geometry(const Shape& x, const Shape& weight, const Shape& out, const Conv2dAttrs& a) {
  ConvGeom g{};
  g.n = x[0], g.c = x[1], g.h = x[2], g.w = x[3];
  g.o = weight[0], g.kh = weight[2], g.kw = weight[3];
  g.oh = out[2], g.ow = out[3];
  g.sh = a.stride[0], g.sw = a.stride[1], g.ph = a.padding[0], g.pw = a.padding[1];
  g.dh = a.dilation[0], g.dw = a.dilation[1], g.groups = a.groups;
  g.cg = g.c / g.groups, g.og = g.o / g.groups;
  g.kk = g.cg * g.kh * g.kw;
  g.p = g.oh * g.ow;
  g.pointwise = g.kh == 1 && g.kw == 1 && g.sh == 1 && g.sw == 1 && g.ph == 0 && g.pw == 0;
  return g;
}

template <typename T>
std::unique_ptr<T[]> scratch(int64_t n) {
  return std::unique_ptr<T[]>(new T[static_cast<size_t>(std::max<int64_t>(n, 1))]);
}

// About this many bytes of column matrix per band: small enough to stay in a
// core's L2 cache from im2col to the GEMM that consumes it, but never fewer
// than kMinBandCols columns, below which the GEMM itself loses efficiency.
constexpr double kBandBytes = 768 * 1024;
constexpr int64_t kMinBandCols = 512;

// Output rows per band (whole rows, at least one).
int64_t band_rows(const ConvGeom& g, size_t elem) {
  const double row_bytes = static_cast<double>(g.kk) * static_cast<double>(g.ow) * static_cast<double>(elem);
  const int64_t by_cache = static_cast<int64_t>(kBandBytes / std::max(row_bytes, 1.0));
  const int64_t by_gemm = (kMinBandCols + g.ow - 1) / std::max<int64_t>(g.ow, 1);
  return std::clamp<int64_t>(std::max(by_cache, by_gemm), 1, std::max<int64_t>(g.oh, 1));
}

// Calls f(band) over the output rows in bands of `rows`.
template <typename F>
void for_each_band(const ConvGeom& g, int64_t rows, F&& f) {
  for (int64_t y = 0; y < g.oh; y += rows) f(Band{y, std::min(g.oh, y + rows)});
}

// Runs item(i, col, slot) for i in [0, n): whole items per OpenMP thread when
// that pays (each thread with its own column buffer of `col_size`), else in turn.
// item's third argument is the index of the thread's slot (0 in turn).
template <typename T, typename Item>
void for_each_item(int64_t n, double flops_each, int64_t col_size, Item&& item) {
  if (prefer_batch_parallel(n, flops_each)) {
#pragma omp parallel
    {
      auto col = scratch<T>(col_size);
      int slot = 0;
#ifdef _OPENMP
      slot = omp_get_thread_num();
#endif
#pragma omp for schedule(static)
      for (int64_t i = 0; i < n; ++i) item(i, col.get(), slot);
    }
  } else {
    auto col = scratch<T>(col_size);
    for (int64_t i = 0; i < n; ++i) item(i, col.get(), 0);
  }
}

template <typename T>
void forward(const T* x, const T* w, const T* bias, const T* residual, T* out, const ConvGeom& g, bool relu) {
  const int64_t rows = band_rows(g, sizeof(T));
  const int64_t col_size = g.pointwise ? 0 : g.kk * rows * g.ow;
  for_each_item<T>(g.n * g.groups, 2.0 * g.og * g.kk * g.p, col_size, [&](int64_t i, T* col, int) {
    const int64_t n = i / g.groups, gi = i % g.groups;
    const T* xg = x + (n * g.c + gi * g.cg) * g.h * g.w;
    const T* wg = w + gi * g.og * g.kk;
    T* yg = out + (n * g.o + gi * g.og) * g.p;
    if (g.pointwise) {
      gemm(false, false, g.og, g.p, g.kk, T(1), wg, g.kk, xg, g.p, T(0), yg, g.p);
    } else {
      for_each_band(g, rows, [&](Band band) {
        const int64_t cols = band.cols(g);
        im2col(xg, g, g.cg, band, col);
        gemm(false, false, g.og, cols, g.kk, T(1), wg, g.kk, col, cols, T(0), yg + band.y0 * g.ow, g.p);
      });
    }
    if (bias) {
      for (int64_t o = 0; o < g.og; ++o) {
        const T b = bias[gi * g.og + o];
        T* row = yg + o * g.p;
        for (int64_t q = 0; q < g.p; ++q) row[q] += b;
      }
    }
    if (residual) {
      const T* rg = residual + (n * g.o + gi * g.og) * g.p;
      for (int64_t q = 0; q < g.og * g.p; ++q) yg[q] += rg[q];
    }
    if (relu)  // as the relu op: NaN stays NaN
      for (int64_t q = 0; q < g.og * g.p; ++q) yg[q] = yg[q] < T(0) ? T(0) : yg[q];
  });
}

template <typename T>
void backward_input(const T* gy, const T* w, T* gx, const ConvGeom& g) {
  const int64_t rows = band_rows(g, sizeof(T));
  const int64_t col_size = g.pointwise ? 0 : g.kk * rows * g.ow;
  for_each_item<T>(g.n * g.groups, 2.0 * g.og * g.kk * g.p, col_size, [&](int64_t i, T* col, int) {
    const int64_t n = i / g.groups, gi = i % g.groups;
    const T* gyg = gy + (n * g.o + gi * g.og) * g.p;
    T* gxg = gx + (n * g.c + gi * g.cg) * g.h * g.w;
    const T* wg = w + gi * g.og * g.kk;
    if (g.pointwise) {
      gemm(true, false, g.kk, g.p, g.og, T(1), wg, g.kk, gyg, g.p, T(0), gxg, g.p);
      return;
    }
    std::fill(gxg, gxg + g.cg * g.h * g.w, T(0));
    for_each_band(g, rows, [&](Band band) {
      const int64_t cols = band.cols(g);
      gemm(true, false, g.kk, cols, g.og, T(1), wg, g.kk, gyg + band.y0 * g.ow, g.p, T(0), col, cols);
      col2im_add(col, g, g.cg, band, gxg);
    });
  });
}

template <typename T>
void backward_weight(const T* gy, const T* x, T* gw, const ConvGeom& g) {
  const int64_t wsize = g.o * g.kk;
  const int64_t items = g.n * g.groups;
  const double flops = 2.0 * g.og * g.kk * g.p;
  // Threads accumulate into private copies of the weight gradient, summed at the
  // end; slot 0 accumulates straight into the output.
  const int slots = prefer_batch_parallel(items, flops) ? num_threads() : 1;
  std::vector<std::unique_ptr<T[]>> partial;
  for (int s = 1; s < slots; ++s) partial.push_back(scratch<T>(wsize));
  parallel_for(wsize, kGrainElementwise, [&](int64_t b, int64_t e) {
    std::fill(gw + b, gw + e, T(0));
    for (auto& p : partial) std::fill(p.get() + b, p.get() + e, T(0));
  });
  const int64_t rows = band_rows(g, sizeof(T));
  const int64_t col_size = g.pointwise ? 0 : g.kk * rows * g.ow;
  for_each_item<T>(items, flops, col_size, [&](int64_t i, T* col, int slot) {
    const int64_t n = i / g.groups, gi = i % g.groups;
    const T* gyg = gy + (n * g.o + gi * g.og) * g.p;
    const T* xg = x + (n * g.c + gi * g.cg) * g.h * g.w;
    T* acc = (slot == 0 ? gw : partial[slot - 1].get()) + gi * g.og * g.kk;
    if (g.pointwise) {
      gemm(false, true, g.og, g.kk, g.p, T(1), gyg, g.p, xg, g.p, T(1), acc, g.kk);
      return;
    }
    for_each_band(g, rows, [&](Band band) {
      const int64_t cols = band.cols(g);
      im2col(xg, g, g.cg, band, col);
      gemm(false, true, g.og, g.kk, cols, T(1), gyg + band.y0 * g.ow, g.p, col, cols, T(1), acc, g.kk);
    });
  });
  if (partial.empty()) return;
  parallel_for(wsize, kGrainElementwise, [&](int64_t b, int64_t e) {
    for (auto& p : partial)
      for (int64_t k = b; k < e; ++k) gw[k] += p[k];
  });
}

// One row's sum (an image's channel of the output gradient): 50,176 terms at
// 224 x 224, of both signs. A single running float sum over the row loses
// float32's accuracy as the row grows (6e-6 of the result at 224 x 224,
// bench/NOTES.md section 48); here runs of 16 terms go into 16 independent
// float lanes (which also vectorize), and each chunk's lanes into a double, so
// the error no longer grows with the row.
template <typename T>
double row_sum(const T* row, int64_t p) {
  constexpr int64_t kLanes = 16, kChunk = 16 * kLanes;
  double total = 0;
  int64_t q = 0;
  for (; q + kChunk <= p; q += kChunk) {
    T lanes[kLanes] = {};
    for (int64_t i = q; i < q + kChunk; i += kLanes)
      for (int64_t l = 0; l < kLanes; ++l) lanes[l] += row[i + l];
    for (int64_t l = 0; l < kLanes; ++l) total += static_cast<double>(lanes[l]);
  }
  for (; q < p; ++q) total += static_cast<double>(row[q]);
  return total;
}

template <typename T>
void backward_bias(const T* gy, T* gb, int64_t n, int64_t o, int64_t p) {
  parallel_for(o, std::max<int64_t>(1, kGrainElementwise / std::max<int64_t>(n * p, 1)), [&](int64_t b, int64_t e) {
    for (int64_t c = b; c < e; ++c) {
      double s = 0;
      for (int64_t i = 0; i < n; ++i) s += row_sum(gy + (i * o + c) * p, p);
      gb[c] = static_cast<T>(s);
    }
  });
}

void conv2d_kernel(OpCall& call) {
  const ConvGeom g = geometry(call.in(0).shape(), call.in(1).shape(), call.out(0).shape(), call.attrs<Conv2dAttrs>());
  with_float_math(call, [&](auto tag, const std::vector<Tensor>& in, const std::vector<Tensor>& out) {
    using T = typename decltype(tag)::type;
    const bool residual = in.size() > 3 && in[3].defined();
    forward(in[0].data<T>(), in[1].data<T>(), in[2].defined() ? in[2].data<T>() : nullptr,
            residual ? in[3].data<T>() : nullptr, out[0].data<T>(), g, call.attrs<Conv2dAttrs>().relu);
  });
}

void conv2d_backward_input_kernel(OpCall& call) {
  const ConvGeom g = geometry(call.out(0).shape(), call.in(1).shape(), call.in(0).shape(), call.attrs<Conv2dAttrs>());
  with_float_math(call, [&](auto tag, const std::vector<Tensor>& in, const std::vector<Tensor>& out) {
    using T = typename decltype(tag)::type;
    backward_input(in[0].data<T>(), in[1].data<T>(), out[0].data<T>(), g);
  });
}

void conv2d_backward_weight_kernel(OpCall& call) {
  const ConvGeom g = geometry(call.in(1).shape(), call.out(0).shape(), call.in(0).shape(), call.attrs<Conv2dAttrs>());
  with_float_math(call, [&](auto tag, const std::vector<Tensor>& in, const std::vector<Tensor>& out) {
    using T = typename decltype(tag)::type;
    backward_weight(in[0].data<T>(), in[1].data<T>(), out[0].data<T>(), g);
  });
}

// With the fused ReLU's saved output (input 1), the gradient is masked first,
// exactly (g or 0 in T), into output 1, and the sums are taken over that.
void conv2d_backward_bias_kernel(OpCall& call) {
  const Shape& s = call.in(0).shape();
  OpCall sums;
  sums.outputs = {call.out(0)};
  if (call.inputs.size() > 1 && call.in(1).defined()) {
    const Tensor& masked = call.out(1);
    visit_floating(masked.dtype(), [&](auto tag) {
      using T = typename decltype(tag)::type;
      using C = compute_t<T>;
      binary_loop<T, T, T>(masked, call.in(0), call.in(1),
                           [](T g, T y) { return static_cast<C>(y) > C(0) ? g : static_cast<T>(C(0)); });
    });
    sums.inputs = {masked};
  } else {
    sums.inputs = {call.in(0)};
  }
  with_float_math(sums, [&](auto tag, const std::vector<Tensor>& in, const std::vector<Tensor>& out) {
    using T = typename decltype(tag)::type;
    backward_bias(in[0].data<T>(), out[0].data<T>(), s[0], s[1], s[2] * s[3]);
  });
}

// oneDNN first where it takes the call (onednn/onednn.h: float32, bfloat16 on
// CPUs with native support, both layouts in place); the reference otherwise.
template <bool (*fast)(OpCall&), KernelFn reference>
void fast_or_reference(OpCall& call) {
  if (!fast(call)) in_nchw<reference>(call);
}

// The backward-data with a partial sum to add into (input 2, usually the
// output itself): the data gradient into a tensor of its own, then
// grad_x = partial + it, rounded as the add op rounds. That is the definition,
// and the autograd engine's sum without the fused path, so on the CPU both
// paths give the same bits.
template <KernelFn kernel>
void backward_input_accumulating(OpCall& call) {
  if (call.inputs.size() < 3 || !call.in(2).defined()) return kernel(call);
  const Tensor& out = call.out(0);
  OpCall own = call;
  own.inputs.resize(2);
  // Dense with the output's strides (the ops layer made it dense in the call's layout).
  own.outputs = {
      Tensor::empty({out.numel()}, out.dtype(), out.device()).as_strided_view(out.shape(), out.strides(), 0)};
  kernel(own);
  add_partial_sum(out, call.in(2), own.out(0));
}

// conv2d_relu and conv2d_add_relu: the same kernel, which reads the ReLU from
// the attributes and the residual from a fourth input.
constexpr KernelFn kForward = fast_or_reference<onednn::conv2d_forward, conv2d_kernel>;
HEARTH_REGISTER_CPU_KERNEL(conv2d, kForward, DTypeSet::floating());
HEARTH_REGISTER_CPU_KERNEL(conv2d_relu, kForward, DTypeSet::floating());
HEARTH_REGISTER_CPU_KERNEL(conv2d_add_relu, kForward, DTypeSet::floating());
HEARTH_REGISTER_CPU_KERNEL(
    conv2d_backward_input,
    (backward_input_accumulating<fast_or_reference<onednn::conv2d_backward_input, conv2d_backward_input_kernel>>),
    DTypeSet::floating());
HEARTH_REGISTER_CPU_KERNEL(conv2d_backward_weight,
                           (fast_or_reference<onednn::conv2d_backward_weight, conv2d_backward_weight_kernel>),
                           DTypeSet::floating());
HEARTH_REGISTER_CPU_KERNEL(conv2d_backward_bias, in_nchw<conv2d_backward_bias_kernel>, DTypeSet::floating());

}  // namespace
}  // namespace hearth::cpu
