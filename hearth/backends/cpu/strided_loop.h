// The loop every CPU elementwise kernel runs on: N operands with one common shape
// (broadcast inputs have stride 0), any strides. Dimensions that are contiguous
// across all operands are merged, so dense tensors run one flat inner loop.
#pragma once

#include <array>
#include <cstdint>
#include <vector>

#include "hearth/backends/cpu/parallel.h"
#include "hearth/core/tensor.h"

namespace hearth::cpu {

template <size_t N>
struct StridedOperands {
  std::array<char*, N> data;
  std::array<std::vector<int64_t>, N> byte_strides;  // per dim
  Shape shape;
};

// Strides of `t` viewed at `shape` (t's shape must broadcast to it), in bytes.
std::vector<int64_t> broadcast_byte_strides(const Tensor& t, const Shape& shape);

// Merges adjacent dimensions that are jointly contiguous; drops size-1 dims.
template <size_t N>
void coalesce(StridedOperands<N>& ops) {
  Shape shape;
  std::array<std::vector<int64_t>, N> strides;
  for (size_t d = 0; d < ops.shape.size(); ++d) {
    if (ops.shape[d] == 1) continue;
    bool merge = !shape.empty();
    for (size_t k = 0; k < N && merge; ++k)
      merge = strides[k].back() == ops.byte_strides[k][d] * ops.shape[d];
    if (merge) {
      shape.back() *= ops.shape[d];
      for (size_t k = 0; k < N; ++k) strides[k].back() = ops.byte_strides[k][d];
    } else {
      shape.push_back(ops.shape[d]);
      for (size_t k = 0; k < N; ++k) strides[k].push_back(ops.byte_strides[k][d]);
    }
  }
  if (shape.empty()) {  // a single element
    shape.push_back(1);
    for (size_t k = 0; k < N; ++k) strides[k].push_back(0);
  }
  ops.shape = std::move(shape);
  ops.byte_strides = std::move(strides);
}

// Runs inner(ptrs, inner_strides, n) over rows of the innermost dimension, in
// parallel across rows (or across chunks of one long row).
template <size_t N, typename Inner>
void for_each_strided(StridedOperands<N> ops, Inner&& inner) {
  coalesce(ops);
  const int64_t ndim = static_cast<int64_t>(ops.shape.size());
  const int64_t inner_n = ops.shape.back();
  std::array<int64_t, N> inner_strides;
  for (size_t k = 0; k < N; ++k) inner_strides[k] = ops.byte_strides[k].back();
  int64_t rows = 1;
  for (int64_t d = 0; d + 1 < ndim; ++d) rows *= ops.shape[d];
  const int64_t total = rows * inner_n;
  if (total == 0) return;

  if (rows == 1) {
    parallel_for(inner_n, kGrainElementwise, [&](int64_t b, int64_t e) {
      std::array<char*, N> p;
      for (size_t k = 0; k < N; ++k) p[k] = ops.data[k] + b * inner_strides[k];
      inner(p, inner_strides, e - b);
    });
    return;
  }
  int64_t grain = std::max<int64_t>(1, kGrainElementwise / std::max<int64_t>(inner_n, 1));
  parallel_for(rows, grain, [&](int64_t rb, int64_t re) {
    std::vector<int64_t> idx(ndim - 1, 0);
    int64_t r = rb;  // unravel rb
    for (int64_t d = ndim - 2; d >= 0; --d) {
      idx[d] = r % ops.shape[d];
      r /= ops.shape[d];
    }
    for (int64_t row = rb; row < re; ++row) {
      std::array<char*, N> p;
      for (size_t k = 0; k < N; ++k) {
        char* base = ops.data[k];
        for (int64_t d = 0; d + 1 < ndim; ++d) base += idx[d] * ops.byte_strides[k][d];
        p[k] = base;
      }
      inner(p, inner_strides, inner_n);
      for (int64_t d = ndim - 2; d >= 0; --d) {  // increment the multi-index
        if (++idx[d] < ops.shape[d]) break;
        idx[d] = 0;
      }
    }
  });
}

// Convenience: operands are tensors viewed at `shape` (outputs first by convention).
template <size_t N>
StridedOperands<N> make_operands(const std::array<const Tensor*, N>& tensors, const Shape& shape) {
  StridedOperands<N> ops;
  ops.shape = shape;
  for (size_t k = 0; k < N; ++k) {
    ops.data[k] = static_cast<char*>(tensors[k]->data_ptr());
    ops.byte_strides[k] = broadcast_byte_strides(*tensors[k], shape);
  }
  return ops;
}

// out[i] = f(a[i]) with element types Out and In.
template <typename Out, typename In, typename F>
void unary_loop(const Tensor& out, const Tensor& a, F&& f) {
  for_each_strided<2>(make_operands<2>({&out, &a}, out.shape()),
                      [&](const std::array<char*, 2>& p, const std::array<int64_t, 2>& s, int64_t n) {
                        char* o = p[0];
                        const char* x = p[1];
                        if (s[0] == sizeof(Out) && s[1] == sizeof(In)) {
                          Out* op = reinterpret_cast<Out*>(o);
                          const In* xp = reinterpret_cast<const In*>(x);
                          for (int64_t i = 0; i < n; ++i) op[i] = f(xp[i]);
                        } else {
                          for (int64_t i = 0; i < n; ++i)
                            *reinterpret_cast<Out*>(o + i * s[0]) = f(*reinterpret_cast<const In*>(x + i * s[1]));
                        }
                      });
}

// out[i] = f(a[i], b[i]); a and b broadcast to out's shape.
template <typename Out, typename A, typename B, typename F>
void binary_loop(const Tensor& out, const Tensor& a, const Tensor& b, F&& f) {
  for_each_strided<3>(make_operands<3>({&out, &a, &b}, out.shape()),
                      [&](const std::array<char*, 3>& p, const std::array<int64_t, 3>& s, int64_t n) {
                        if (s[0] == sizeof(Out) && s[1] == sizeof(A) && s[2] == sizeof(B)) {
                          Out* op = reinterpret_cast<Out*>(p[0]);
                          const A* ap = reinterpret_cast<const A*>(p[1]);
                          const B* bp = reinterpret_cast<const B*>(p[2]);
                          for (int64_t i = 0; i < n; ++i) op[i] = f(ap[i], bp[i]);
                        } else {
                          for (int64_t i = 0; i < n; ++i)
                            *reinterpret_cast<Out*>(p[0] + i * s[0]) =
                                f(*reinterpret_cast<const A*>(p[1] + i * s[1]),
                                  *reinterpret_cast<const B*>(p[2] + i * s[2]));
                        }
                      });
}

// out[i] = f(a[i], b[i], c[i]).
template <typename Out, typename A, typename B, typename C, typename F>
void ternary_loop(const Tensor& out, const Tensor& a, const Tensor& b, const Tensor& c, F&& f) {
  for_each_strided<4>(make_operands<4>({&out, &a, &b, &c}, out.shape()),
                      [&](const std::array<char*, 4>& p, const std::array<int64_t, 4>& s, int64_t n) {
                        for (int64_t i = 0; i < n; ++i)
                          *reinterpret_cast<Out*>(p[0] + i * s[0]) =
                              f(*reinterpret_cast<const A*>(p[1] + i * s[1]),
                                *reinterpret_cast<const B*>(p[2] + i * s[2]),
                                *reinterpret_cast<const C*>(p[3] + i * s[3]));
                      });
}

}  // namespace hearth::cpu
