// index_select, gather and scatter_add on the CPU. gather and scatter_add walk
// the index's shape in tasks that each own a block of positions across every
// coordinate except `dim`: positions that may hit the same destination differ
// only along `dim`, so one task sees all of them and accumulation needs no locks
// and happens in a fixed order. Indices from CPU callers arrive checked, but
// the CPU fallback of other devices passes theirs unchecked, so every index is
// tested before use and a bad one raises the functional layer's error.
#include "hearth/dispatch/schemas/index.h"

#include <array>
#include <atomic>
#include <cstring>
#include <vector>

#include "hearth/backends/cpu/parallel.h"
#include "hearth/backends/cpu/strided_loop.h"
#include "hearth/core/dtype_visit.h"
#include "hearth/dispatch/registry.h"

namespace hearth::cpu {
namespace {

// Row-major walk over `shape` that tracks an element offset into each of N
// strided tensors.
template <size_t N>
class OffsetWalker {
 public:
  OffsetWalker(Shape shape, std::array<Strides, N> strides) : shape_(std::move(shape)), strides_(std::move(strides)) {
    idx_.assign(shape_.size(), 0);
  }
  void seek(int64_t linear) {
    off_.fill(0);
    for (int64_t d = static_cast<int64_t>(shape_.size()) - 1; d >= 0; --d) {
      idx_[d] = linear % shape_[d];
      linear /= shape_[d];
      for (size_t k = 0; k < N; ++k) off_[k] += idx_[d] * strides_[k][d];
    }
  }
  void next() {
    for (int64_t d = static_cast<int64_t>(shape_.size()) - 1; d >= 0; --d) {
      for (size_t k = 0; k < N; ++k) off_[k] += strides_[k][d];
      if (++idx_[d] < shape_[d]) return;
      for (size_t k = 0; k < N; ++k) off_[k] -= shape_[d] * strides_[k][d];
      idx_[d] = 0;
    }
  }
  const std::array<int64_t, N>& offsets() const { return off_; }

 private:
  Shape shape_;
  std::array<Strides, N> strides_;
  std::vector<int64_t> idx_;
  std::array<int64_t, N> off_{};
};

constexpr int64_t kInnerBlock = 4096;

bool in_range(int64_t v, int64_t size) { return static_cast<uint64_t>(v) < static_cast<uint64_t>(size); }

// The first out-of-range index seen by any thread; raised once the loop is over.
class BadIndex {
 public:
  void note(int64_t v) {
    bool expected = false;
    if (seen_.compare_exchange_strong(expected, true)) value_ = v;
  }
  void raise_if_seen(const char* op, int64_t dim, int64_t size) const {
    HEARTH_CHECK(!seen_.load(), ValueError, "[", op, "] index ", value_, " is out of bounds for dimension ", dim,
                 " with size ", size);
  }

 private:
  std::atomic<bool> seen_{false};
  int64_t value_ = 0;
};

// Calls f(offsets, j) for every position of `shape`, where j is the coordinate
// along `dim` and offsets[k] counts every other coordinate in tensor k's strides.
template <size_t N, typename F>
void for_each_along_dim(const Shape& shape, int64_t dim, const std::array<const Strides*, N>& strides, F&& f) {
  Shape outer_shape(shape.begin(), shape.begin() + dim);
  Shape inner_shape(shape.begin() + dim + 1, shape.end());
  std::array<Strides, N> outer_strides, inner_strides;
  for (size_t k = 0; k < N; ++k) {
    outer_strides[k].assign(strides[k]->begin(), strides[k]->begin() + dim);
    inner_strides[k].assign(strides[k]->begin() + dim + 1, strides[k]->end());
  }
  const int64_t outer = numel_of(outer_shape), inner = numel_of(inner_shape), n = shape[dim];
  if (outer == 0 || inner == 0 || n == 0) return;
  const int64_t blocks = (inner + kInnerBlock - 1) / kInnerBlock;
  const int64_t work = n * std::min(inner, kInnerBlock);
  parallel_for(outer * blocks, std::max<int64_t>(1, kGrainElementwise / work), [&](int64_t tb, int64_t te) {
    OffsetWalker<N> ow(outer_shape, outer_strides);
    OffsetWalker<N> iw(inner_shape, inner_strides);
    for (int64_t t = tb; t < te; ++t) {
      ow.seek(t / blocks);
      const int64_t i0 = (t % blocks) * kInnerBlock, i1 = std::min(inner, i0 + kInnerBlock);
      for (int64_t j = 0; j < n; ++j) {
        iw.seek(i0);
        for (int64_t i = i0; i < i1; ++i, iw.next()) {
          std::array<int64_t, N> off;
          for (size_t k = 0; k < N; ++k) off[k] = ow.offsets()[k] + iw.offsets()[k];
          f(off, j);
        }
      }
    }
  });
}

void index_select_kernel(OpCall& call) {
  const Tensor& x = call.in(0);
  const Tensor& index = call.in(1);
  const Tensor& out = call.out(0);
  const int64_t outer = x.shape()[0], n = x.shape()[1], inner = x.shape()[2], k = index.numel();
  const size_t row_bytes = static_cast<size_t>(inner) * x.element_size();
  const char* src = static_cast<const char*>(x.data_ptr());
  char* dst = static_cast<char*>(out.data_ptr());
  const int64_t* idx = static_cast<const int64_t*>(index.data_ptr());
  for (int64_t j = 0; j < k; ++j)
    HEARTH_CHECK(in_range(idx[j], n), ValueError, "[index_select] index ", idx[j], " is out of bounds for dimension ",
                 call.attrs<IndexDimAttrs>().dim, " with size ", n);
  parallel_for(outer * k, std::max<int64_t>(1, kGrainElementwise / std::max<int64_t>(inner, 1)),
               [&](int64_t b, int64_t e) {
                 for (int64_t t = b; t < e; ++t) {
                   const int64_t o = t / k, j = t % k;
                   std::memcpy(dst + t * row_bytes, src + (o * n + idx[j]) * row_bytes, row_bytes);
                 }
               });
}

void gather_kernel(OpCall& call) {
  const Tensor& x = call.in(0);
  const Tensor& index = call.in(1);
  const Tensor& out = call.out(0);
  const int64_t dim = call.attrs<IndexDimAttrs>().dim;
  visit_dtype(x.dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    const T* xp = static_cast<const T*>(x.data_ptr());
    const int64_t* ip = static_cast<const int64_t*>(index.data_ptr());
    T* op = static_cast<T*>(out.data_ptr());
    const int64_t xs = x.strides()[dim], is = index.strides()[dim], os = out.strides()[dim];
    const int64_t size = x.shape()[dim];
    BadIndex bad;
    for_each_along_dim<3>(index.shape(), dim, {&out.strides(), &index.strides(), &x.strides()},
                          [&](const std::array<int64_t, 3>& off, int64_t j) {
                            const int64_t v = ip[off[1] + j * is];
                            if (in_range(v, size))
                              op[off[0] + j * os] = xp[off[2] + v * xs];
                            else
                              bad.note(v);
                          });
    bad.raise_if_seen("gather", dim, size);
  });
}

void scatter_add_kernel(OpCall& call) {
  const Tensor& self = call.in(0);
  const Tensor& index = call.in(1);
  const Tensor& src = call.in(2);
  const Tensor& out = call.out(0);
  const int64_t dim = call.attrs<IndexDimAttrs>().dim;
  const bool in_place = out.data_ptr() == self.data_ptr() && out.strides() == self.strides();
  visit_dtype(self.dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    using C = compute_t<T>;
    if (!in_place) unary_loop<T, T>(out, self, [](T v) { return v; });
    const T* sp = static_cast<const T*>(src.data_ptr());
    const int64_t* ip = static_cast<const int64_t*>(index.data_ptr());
    T* op = static_cast<T*>(out.data_ptr());
    const int64_t ss = src.strides()[dim], is = index.strides()[dim], os = out.strides()[dim];
    const int64_t size = out.shape()[dim];
    BadIndex bad;
    for_each_along_dim<3>(
        index.shape(), dim, {&src.strides(), &index.strides(), &out.strides()},
        [&](const std::array<int64_t, 3>& off, int64_t j) {
          const int64_t v = ip[off[1] + j * is];
          if (!in_range(v, size)) {
            bad.note(v);
            return;
          }
          T& dst = op[off[2] + v * os];
          if constexpr (std::is_same_v<T, bool>) {
            dst = dst || sp[off[0] + j * ss];
          } else {
            dst = static_cast<T>(static_cast<C>(static_cast<C>(dst) + static_cast<C>(sp[off[0] + j * ss])));
          }
        });
    bad.raise_if_seen("scatter_add", dim, size);
  });
}

HEARTH_REGISTER_KERNEL(index_select, kCpu, index_select_kernel, DTypeSet::all());
HEARTH_REGISTER_KERNEL(gather, kCpu, gather_kernel, DTypeSet::all());
HEARTH_REGISTER_KERNEL(scatter_add, kCpu, scatter_add_kernel, DTypeSet::all());

}  // namespace
}  // namespace hearth::cpu
