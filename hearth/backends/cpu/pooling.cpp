// 2-D pooling on the CPU, forward and backward, in parallel over (n, c) planes.
// Arithmetic in compute_t (float for the 16-bit types).
#include "hearth/dispatch/schemas/pooling.h"

#include <cmath>
#include <limits>
#include <vector>

#include "hearth/backends/cpu/level_kernel_registrar.h"
#include "hearth/backends/cpu/parallel.h"
#include "hearth/core/dtype_visit.h"
#include "hearth/dispatch/nchw_detour.h"

namespace hearth::cpu {
namespace {

struct Planes {
  int64_t count, h, w, oh, ow;
};

Planes planes_of(const Tensor& x, const Tensor& y) {
  return {x.size(0) * x.size(1), x.size(2), x.size(3), y.size(2), y.size(3)};
}

// Calls f(first, last) over ranges of planes, each of about `work` steps.
template <typename F>
void over_planes(const Planes& p, int64_t work, F&& f) {
  parallel_for(p.count, std::max<int64_t>(1, kGrainElementwise / std::max<int64_t>(work, 1)), f);
}

template <typename F>
void visit_floating(DType dt, F&& f) {
  visit_dtype(dt, [&](auto tag) {
    using T = typename decltype(tag)::type;
    if constexpr (std::is_floating_point_v<compute_t<T>>) f(tag);
  });
}

// The maximum of output (oy, ox)'s window in plane `in` and its position
// iy * W + ix: the first maximum in window order wins, a NaN stops the scan.
// The backward finds the argmax again with it rather than saving indices.
template <typename T, typename C = compute_t<T>>
int64_t window_argmax(const T* in, const Planes& p, const Pool2dAttrs& a, int64_t oy, int64_t ox, C& best) {
  int64_t y0 = oy * a.stride[0] - a.padding[0];
  const int64_t y1 = std::min(y0 + (a.kernel[0] - 1) * a.dilation[0] + 1, p.h);
  while (y0 < 0) y0 += a.dilation[0];
  int64_t x0 = ox * a.stride[1] - a.padding[1];
  const int64_t x1 = std::min(x0 + (a.kernel[1] - 1) * a.dilation[1] + 1, p.w);
  while (x0 < 0) x0 += a.dilation[1];
  best = -std::numeric_limits<C>::infinity();
  int64_t arg = y0 * p.w + x0;
  for (int64_t iy = y0; iy < y1; iy += a.dilation[0])
    for (int64_t ix = x0; ix < x1; ix += a.dilation[1]) {
      const C v = static_cast<C>(in[iy * p.w + ix]);
      if (v > best || std::isnan(v)) {
        best = v;
        arg = iy * p.w + ix;
        if (std::isnan(v)) return arg;
      }
    }
  return arg;
}

// The saved index of an argmax at iy * W + ix: its place ky * kw + kx in the
// window of output (oy, ox) (schemas/pooling.h); and back.
uint8_t window_slot(const Planes& p, const Pool2dAttrs& a, int64_t oy, int64_t ox, int64_t flat) {
  const int64_t ky = (flat / p.w - (oy * a.stride[0] - a.padding[0])) / a.dilation[0];
  const int64_t kx = (flat % p.w - (ox * a.stride[1] - a.padding[1])) / a.dilation[1];
  return static_cast<uint8_t>(ky * a.kernel[1] + kx);
}
int64_t slot_cell(const Planes& p, const Pool2dAttrs& a, int64_t oy, int64_t ox, uint8_t slot) {
  const int64_t ky = slot / a.kernel[1], kx = slot % a.kernel[1];
  return (oy * a.stride[0] - a.padding[0] + ky * a.dilation[0]) * p.w + (ox * a.stride[1] - a.padding[1] + kx * a.dilation[1]);
}

void max_pool2d_kernel(OpCall& call) {
  const Tensor &x = call.in(0), &y = call.out(0);
  const Tensor idx = call.outputs.size() > 1 ? call.out(1) : Tensor();  // wanted for overlapping windows
  const Pool2dAttrs& a = call.attrs<Pool2dAttrs>();
  const Planes p = planes_of(x, y);
  visit_floating(x.dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    using C = compute_t<T>;
    const T* xs = x.data<T>();
    T* ys = y.data<T>();
    uint8_t* is = idx.defined() ? idx.data<uint8_t>() : nullptr;
    over_planes(p, p.oh * p.ow * a.kernel[0] * a.kernel[1], [&](int64_t b, int64_t e) {
      for (int64_t pl = b; pl < e; ++pl) {
        const T* in = xs + pl * p.h * p.w;
        for (int64_t oy = 0; oy < p.oh; ++oy)
          for (int64_t ox = 0; ox < p.ow; ++ox) {
            C best;
            const int64_t arg = window_argmax(in, p, a, oy, ox, best);
            const int64_t o = (pl * p.oh + oy) * p.ow + ox;
            ys[o] = static_cast<T>(best);
            if (is) is[o] = window_slot(p, a, oy, ox, arg);
          }
      }
    });
  });
}

// Each output's gradient goes to its window's argmax, saved by the forward
// (input 1) or found again in x (input 2), scattered in output order.
void max_pool2d_backward_kernel(OpCall& call) {
  const Tensor &gy = call.in(0), &idx = call.in(1), &gx = call.out(0);
  const Tensor x = idx.defined() ? Tensor() : call.in(2);
  const Pool2dAttrs& a = call.attrs<Pool2dAttrs>();
  const Planes p = planes_of(gx, gy);
  visit_floating(gx.dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    using C = compute_t<T>;
    const T* g = gy.data<T>();
    const T* xs = x.defined() ? x.data<T>() : nullptr;
    const uint8_t* is = idx.defined() ? idx.data<uint8_t>() : nullptr;
    T* out = gx.data<T>();
    over_planes(p, p.h * p.w + p.oh * p.ow * a.kernel[0] * a.kernel[1], [&](int64_t b, int64_t e) {
      std::vector<C> acc;
      for (int64_t pl = b; pl < e; ++pl) {
        const T* in = xs ? xs + pl * p.h * p.w : nullptr;
        T* plane = out + pl * p.h * p.w;
        // Overlapping windows accumulate in compute_t, rounded once.
        acc.assign(static_cast<size_t>(p.h * p.w), C(0));
        for (int64_t oy = 0; oy < p.oh; ++oy)
          for (int64_t ox = 0; ox < p.ow; ++ox) {
            const int64_t o = (pl * p.oh + oy) * p.ow + ox;
            C best;
            acc[is ? slot_cell(p, a, oy, ox, is[o]) : window_argmax(in, p, a, oy, ox, best)] += static_cast<C>(g[o]);
          }
        for (int64_t i = 0; i < p.h * p.w; ++i) plane[i] = static_cast<T>(acc[i]);
      }
    });
  });
}

// The clipped window of output o along one dim and its divisor (schemas/pooling.h).
struct Window {
  int64_t begin, end, divisor_extent;
};

Window avg_window(int64_t o, int64_t in, int64_t k, int64_t s, int64_t p, bool count_pad) {
  int64_t b = o * s - p;
  int64_t e = std::min(b + k, in + p);
  const int64_t padded = e - b;
  b = std::max<int64_t>(b, 0);
  e = std::min(e, in);
  return {b, e, count_pad ? padded : e - b};
}

template <typename F>
void avg_pool_windows(const Planes& p, const Pool2dAttrs& a, F&& f) {
  over_planes(p, p.oh * p.ow * a.kernel[0] * a.kernel[1], [&](int64_t b, int64_t e) {
    for (int64_t pl = b; pl < e; ++pl)
      for (int64_t oy = 0; oy < p.oh; ++oy) {
        const Window wy = avg_window(oy, p.h, a.kernel[0], a.stride[0], a.padding[0], a.count_include_pad);
        for (int64_t ox = 0; ox < p.ow; ++ox) {
          const Window wx = avg_window(ox, p.w, a.kernel[1], a.stride[1], a.padding[1], a.count_include_pad);
          f(pl, (pl * p.oh + oy) * p.ow + ox, wy, wx);
        }
      }
  });
}

void avg_pool2d_kernel(OpCall& call) {
  const Tensor &x = call.in(0), &y = call.out(0);
  const Pool2dAttrs& a = call.attrs<Pool2dAttrs>();
  const Planes p = planes_of(x, y);
  visit_floating(x.dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    using C = compute_t<T>;
    const T* xs = x.data<T>();
    T* ys = y.data<T>();
    avg_pool_windows(p, a, [&](int64_t pl, int64_t o, const Window& wy, const Window& wx) {
      if (wy.begin >= wy.end || wx.begin >= wx.end) {  // a window lying wholly in padding
        ys[o] = T(0);
        return;
      }
      const T* in = xs + pl * p.h * p.w;
      C s = 0;
      for (int64_t iy = wy.begin; iy < wy.end; ++iy)
        for (int64_t ix = wx.begin; ix < wx.end; ++ix) s += static_cast<C>(in[iy * p.w + ix]);
      ys[o] = static_cast<T>(s / static_cast<C>(wy.divisor_extent * wx.divisor_extent));
    });
  });
}

void avg_pool2d_backward_kernel(OpCall& call) {
  const Tensor &gy = call.in(0), &gx = call.out(0);
  const Pool2dAttrs& a = call.attrs<Pool2dAttrs>();
  const Planes p = planes_of(gx, gy);
  visit_floating(gx.dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    using C = compute_t<T>;
    const T* g = gy.data<T>();
    T* out = gx.data<T>();
    over_planes(p, p.oh * p.ow * a.kernel[0] * a.kernel[1], [&](int64_t b, int64_t e) {
      std::vector<C> acc(static_cast<size_t>(p.h * p.w));
      for (int64_t pl = b; pl < e; ++pl) {
        std::fill(acc.begin(), acc.end(), C(0));
        for (int64_t oy = 0; oy < p.oh; ++oy) {
          const Window wy = avg_window(oy, p.h, a.kernel[0], a.stride[0], a.padding[0], a.count_include_pad);
          for (int64_t ox = 0; ox < p.ow; ++ox) {
            const Window wx = avg_window(ox, p.w, a.kernel[1], a.stride[1], a.padding[1], a.count_include_pad);
            if (wy.begin >= wy.end || wx.begin >= wx.end) continue;
            const C share =
                static_cast<C>(g[(pl * p.oh + oy) * p.ow + ox]) / static_cast<C>(wy.divisor_extent * wx.divisor_extent);
            for (int64_t iy = wy.begin; iy < wy.end; ++iy)
              for (int64_t ix = wx.begin; ix < wx.end; ++ix) acc[iy * p.w + ix] += share;
          }
        }
        T* plane = out + pl * p.h * p.w;
        for (int64_t i = 0; i < p.h * p.w; ++i) plane[i] = static_cast<T>(acc[i]);
      }
    });
  });
}

int64_t adaptive_begin(int64_t o, int64_t in, int64_t out) { return (o * in) / out; }
int64_t adaptive_end(int64_t o, int64_t in, int64_t out) { return ((o + 1) * in + out - 1) / out; }

void adaptive_avg_pool2d_kernel(OpCall& call) {
  const Tensor &x = call.in(0), &y = call.out(0);
  const Planes p = planes_of(x, y);
  visit_floating(x.dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    using C = compute_t<T>;
    const T* xs = x.data<T>();
    T* ys = y.data<T>();
    over_planes(p, p.h * p.w + p.oh * p.ow, [&](int64_t b, int64_t e) {
      for (int64_t pl = b; pl < e; ++pl) {
        const T* in = xs + pl * p.h * p.w;
        for (int64_t oy = 0; oy < p.oh; ++oy) {
          const int64_t y0 = adaptive_begin(oy, p.h, p.oh), y1 = adaptive_end(oy, p.h, p.oh);
          for (int64_t ox = 0; ox < p.ow; ++ox) {
            const int64_t x0 = adaptive_begin(ox, p.w, p.ow), x1 = adaptive_end(ox, p.w, p.ow);
            C s = 0;
            for (int64_t iy = y0; iy < y1; ++iy)
              for (int64_t ix = x0; ix < x1; ++ix) s += static_cast<C>(in[iy * p.w + ix]);
            ys[(pl * p.oh + oy) * p.ow + ox] = static_cast<T>(s / static_cast<C>((y1 - y0) * (x1 - x0)));
          }
        }
      }
    });
  });
}

void adaptive_avg_pool2d_backward_kernel(OpCall& call) {
  const Tensor &gy = call.in(0), &gx = call.out(0);
  const Planes p = planes_of(gx, gy);
  visit_floating(gx.dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    using C = compute_t<T>;
    const T* g = gy.data<T>();
    T* out = gx.data<T>();
    over_planes(p, p.h * p.w + p.oh * p.ow, [&](int64_t b, int64_t e) {
      std::vector<C> acc(static_cast<size_t>(p.h * p.w));
      for (int64_t pl = b; pl < e; ++pl) {
        std::fill(acc.begin(), acc.end(), C(0));
        for (int64_t oy = 0; oy < p.oh; ++oy) {
          const int64_t y0 = adaptive_begin(oy, p.h, p.oh), y1 = adaptive_end(oy, p.h, p.oh);
          for (int64_t ox = 0; ox < p.ow; ++ox) {
            const int64_t x0 = adaptive_begin(ox, p.w, p.ow), x1 = adaptive_end(ox, p.w, p.ow);
            const C share = static_cast<C>(g[(pl * p.oh + oy) * p.ow + ox]) / static_cast<C>((y1 - y0) * (x1 - x0));
            for (int64_t iy = y0; iy < y1; ++iy)
              for (int64_t ix = x0; ix < x1; ++ix) acc[iy * p.w + ix] += share;
          }
        }
        T* plane = out + pl * p.h * p.w;
        for (int64_t i = 0; i < p.h * p.w; ++i) plane[i] = static_cast<T>(acc[i]);
      }
    });
  });
}

HEARTH_REGISTER_CPU_KERNEL(max_pool2d, in_nchw<max_pool2d_kernel>, DTypeSet::floating());
HEARTH_REGISTER_CPU_KERNEL(max_pool2d_backward, in_nchw<max_pool2d_backward_kernel>, DTypeSet::floating());
HEARTH_REGISTER_CPU_KERNEL(avg_pool2d, in_nchw<avg_pool2d_kernel>, DTypeSet::floating());
HEARTH_REGISTER_CPU_KERNEL(avg_pool2d_backward, in_nchw<avg_pool2d_backward_kernel>, DTypeSet::floating());
HEARTH_REGISTER_CPU_KERNEL(adaptive_avg_pool2d, in_nchw<adaptive_avg_pool2d_kernel>, DTypeSet::floating());
HEARTH_REGISTER_CPU_KERNEL(adaptive_avg_pool2d_backward, in_nchw<adaptive_avg_pool2d_backward_kernel>,
                       DTypeSet::floating());

}  // namespace
}  // namespace hearth::cpu
