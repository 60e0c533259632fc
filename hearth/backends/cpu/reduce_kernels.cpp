// Row reductions on the CPU: input [outer, inner] contiguous, outputs [outer].
// Floating values accumulate in double, so long float32 and half rows stay
// accurate. Long rows are cut into fixed-size chunks combined in order, so a
// result never depends on the thread count.
#include <cmath>
#include <limits>
#include <utility>
#include <vector>

#include "hearth/backends/cpu/parallel.h"
#include "hearth/dispatch/registry.h"
#include "hearth/dispatch/schemas/reduce_norm.h"
#include "hearth/dispatch/schemas/reduce_var.h"

namespace hearth::cpu {
namespace {

template <typename T>
using acc_t = std::conditional_t<std::is_floating_point_v<compute_t<T>>, double, int64_t>;

template <typename C>
bool is_nan(C v) {
  if constexpr (std::is_floating_point_v<C>)
    return std::isnan(v);
  else
    return false;
}

constexpr int64_t kChunk = 32768;

// Reduces [0, n) as chunk(begin, end) pieces folded left to right by combine.
template <typename Acc, typename Chunk, typename Combine>
Acc chunked_reduce(int64_t n, Chunk&& chunk, Combine&& combine) {
  if (n <= kChunk) return chunk(int64_t{0}, n);
  const int64_t chunks = (n + kChunk - 1) / kChunk;
  // One whole object per chunk: a std::vector<bool> would pack the flags of
  // neighbouring chunks into one word that several threads write at once.
  struct Slot {
    Acc value;
  };
  std::vector<Slot> partial(chunks);
  parallel_for(chunks, 1, [&](int64_t cb, int64_t ce) {
    for (int64_t c = cb; c < ce; ++c) partial[c].value = chunk(c * kChunk, std::min(n, (c + 1) * kChunk));
  });
  Acc acc = partial[0].value;
  for (int64_t c = 1; c < chunks; ++c) acc = combine(acc, partial[c].value);
  return acc;
}

// Calls row(r) for every row, spreading rows across threads.
template <typename Row>
void for_each_row(int64_t outer, int64_t inner, Row&& row) {
  parallel_for(outer, std::max<int64_t>(1, kGrainElementwise / std::max<int64_t>(inner, 1)), [&](int64_t b, int64_t e) {
    for (int64_t r = b; r < e; ++r) row(r);
  });
}

// Sum of term(i) over [0, n) in acc_t precision.
template <typename Acc, typename Term>
Acc chunked_sum(int64_t n, Term&& term) {
  return chunked_reduce<Acc>(
      n,
      [&](int64_t b, int64_t e) {
        Acc acc = 0;
        for (int64_t i = b; i < e; ++i) acc += term(i);
        return acc;
      },
      [](Acc a, Acc b) { return a + b; });
}

void sum_kernel(OpCall& call) {
  const Tensor& x = call.in(0);
  const Tensor& out = call.out(0);
  const int64_t outer = x.shape()[0], inner = x.shape()[1];
  visit_dtype(x.dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    using A = acc_t<T>;
    const T* in = static_cast<const T*>(x.data_ptr());
    T* o = static_cast<T*>(out.data_ptr());
    for_each_row(outer, inner, [&](int64_t r) {
      const T* row = in + r * inner;
      A total = chunked_sum<A>(inner, [&](int64_t i) { return static_cast<A>(static_cast<compute_t<T>>(row[i])); });
      o[r] = static_cast<T>(static_cast<compute_t<T>>(total));
    });
  });
}

// amax / amin: the extreme value of each row; a NaN anywhere makes the result NaN.
template <bool kMax>
void extreme_kernel(OpCall& call) {
  const Tensor& x = call.in(0);
  const Tensor& out = call.out(0);
  const int64_t outer = x.shape()[0], inner = x.shape()[1];
  visit_dtype(x.dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    using C = compute_t<T>;
    const T* in = static_cast<const T*>(x.data_ptr());
    T* o = static_cast<T*>(out.data_ptr());
    auto better = [](C a, C b) { return kMax ? a > b : a < b; };
    auto combine = [&](C a, C b) { return is_nan(a) ? a : (is_nan(b) || better(b, a) ? b : a); };
    for_each_row(outer, inner, [&](int64_t r) {
      const T* row = in + r * inner;
      C best = chunked_reduce<C>(
          inner,
          [&](int64_t b, int64_t e) {
            C acc = static_cast<C>(row[b]);
            for (int64_t i = b + 1; i < e && !is_nan(acc); ++i) acc = combine(acc, static_cast<C>(row[i]));
            return acc;
          },
          combine);
      o[r] = static_cast<T>(best);
    });
  });
}

// max_dim / min_dim: value and index of the first extreme (or the first NaN).
template <bool kMax>
void arg_extreme_kernel(OpCall& call) {
  const Tensor& x = call.in(0);
  const Tensor& values = call.out(0);
  const Tensor& indices = call.out(1);
  const int64_t outer = x.shape()[0], inner = x.shape()[1];
  visit_dtype(x.dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    using C = compute_t<T>;
    using Acc = std::pair<C, int64_t>;
    const T* in = static_cast<const T*>(x.data_ptr());
    T* vo = static_cast<T*>(values.data_ptr());
    int64_t* io = static_cast<int64_t*>(indices.data_ptr());
    // `a` always comes from earlier positions than `b`, so ties keep `a`.
    auto combine = [](const Acc& a, const Acc& b) {
      if (is_nan(a.first)) return a;
      if (is_nan(b.first)) return b;
      return (kMax ? b.first > a.first : b.first < a.first) ? b : a;
    };
    for_each_row(outer, inner, [&](int64_t r) {
      const T* row = in + r * inner;
      Acc best = chunked_reduce<Acc>(
          inner,
          [&](int64_t b, int64_t e) {
            Acc acc{static_cast<C>(row[b]), b};
            for (int64_t i = b + 1; i < e && !is_nan(acc.first); ++i)
              acc = combine(acc, Acc{static_cast<C>(row[i]), i});
            return acc;
          },
          combine);
      vo[r] = static_cast<T>(best.first);
      io[r] = best.second;
    });
  });
}

// Variance by two passes (mean, then squared deviations), both in double.
void var_kernel(OpCall& call) {
  const Tensor& x = call.in(0);
  const Tensor& out = call.out(0);
  const VarAttrs& attrs = call.attrs<VarAttrs>();
  const int64_t outer = x.shape()[0], inner = x.shape()[1];
  const double denom = std::max<double>(0.0, static_cast<double>(inner - attrs.correction));
  visit_dtype(x.dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    if constexpr (std::is_floating_point_v<compute_t<T>>) {
      const T* in = static_cast<const T*>(x.data_ptr());
      T* o = static_cast<T*>(out.data_ptr());
      for_each_row(outer, inner, [&](int64_t r) {
        const T* row = in + r * inner;
        auto value = [&](int64_t i) { return static_cast<double>(static_cast<compute_t<T>>(row[i])); };
        const double mean = chunked_sum<double>(inner, value) / static_cast<double>(inner);
        const double m2 = chunked_sum<double>(inner, [&](int64_t i) {
          const double d = value(i) - mean;
          return d * d;
        });
        double v = m2 / denom;
        if (attrs.take_sqrt) v = std::sqrt(v);
        o[r] = static_cast<T>(static_cast<compute_t<T>>(v));
      });
    }
  });
}

void norm_kernel(OpCall& call) {
  const Tensor& x = call.in(0);
  const Tensor& out = call.out(0);
  const double p = call.attrs<NormAttrs>().p;
  const int64_t outer = x.shape()[0], inner = x.shape()[1];
  visit_dtype(x.dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    if constexpr (std::is_floating_point_v<compute_t<T>>) {
      const T* in = static_cast<const T*>(x.data_ptr());
      T* o = static_cast<T*>(out.data_ptr());
      for_each_row(outer, inner, [&](int64_t r) {
        const T* row = in + r * inner;
        auto mag = [&](int64_t i) { return std::abs(static_cast<double>(static_cast<compute_t<T>>(row[i]))); };
        double result;
        if (std::isinf(p)) {
          const bool largest = p > 0;
          auto combine = [largest](double a, double b) {
            return std::isnan(a) ? a : (std::isnan(b) || (largest ? b > a : b < a) ? b : a);
          };
          result = chunked_reduce<double>(
              inner,
              [&](int64_t b, int64_t e) {
                double acc = mag(b);
                for (int64_t i = b + 1; i < e && !std::isnan(acc); ++i) acc = combine(acc, mag(i));
                return acc;
              },
              combine);
        } else if (p == 0) {
          result = chunked_sum<double>(inner, [&](int64_t i) { return mag(i) != 0.0 ? 1.0 : 0.0; });
        } else if (p == 1) {
          result = chunked_sum<double>(inner, mag);
        } else if (p == 2) {
          result = std::sqrt(chunked_sum<double>(inner, [&](int64_t i) {
            const double m = mag(i);
            return m * m;
          }));
        } else {
          result = std::pow(chunked_sum<double>(inner, [&](int64_t i) { return std::pow(mag(i), p); }), 1.0 / p);
        }
        o[r] = static_cast<T>(static_cast<compute_t<T>>(result));
      });
    }
  });
}

constexpr DTypeSet kAll = DTypeSet::all();
HEARTH_REGISTER_KERNEL(sum, kCpu, sum_kernel, DTypeSet::floating() | DTypeSet{DType::int64});
HEARTH_REGISTER_KERNEL(amax, kCpu, extreme_kernel<true>, kAll);
HEARTH_REGISTER_KERNEL(amin, kCpu, extreme_kernel<false>, kAll);
HEARTH_REGISTER_KERNEL(max_dim, kCpu, arg_extreme_kernel<true>, kAll);
HEARTH_REGISTER_KERNEL(min_dim, kCpu, arg_extreme_kernel<false>, kAll);
HEARTH_REGISTER_KERNEL(var, kCpu, var_kernel, DTypeSet::floating());
HEARTH_REGISTER_KERNEL(norm, kCpu, norm_kernel, DTypeSet::floating());

}  // namespace
}  // namespace hearth::cpu
