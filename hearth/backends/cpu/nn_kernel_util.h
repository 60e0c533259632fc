// Small helpers shared by the CPU nn kernels (norms, softmax, losses, embedding,
// dropout): dispatch over floating dtypes only, and moving short per-channel
// vectors (weights, statistics) between tensors and double buffers, so a kernel
// need not be instantiated for every parameter dtype.
#pragma once

#include <atomic>
#include <cstdint>
#include <vector>

#include "hearth/backends/cpu/elementwise_util.h"  // visit_floating
#include "hearth/core/errors.h"
#include "hearth/core/tensor.h"

namespace hearth::cpu {

// The values of a contiguous floating tensor, widened to double (empty when undefined).
inline std::vector<double> read_doubles(const Tensor& t) {
  if (!t.defined()) return {};
  std::vector<double> v(static_cast<size_t>(t.numel()));
  visit_floating(t.dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    const T* p = static_cast<const T*>(t.data_ptr());
    for (size_t i = 0; i < v.size(); ++i) v[i] = static_cast<double>(static_cast<compute_t<T>>(p[i]));
  });
  return v;
}

// Writes `v` into a contiguous floating tensor, narrowing to its dtype.
inline void write_doubles(const Tensor& t, const std::vector<double>& v) {
  visit_floating(t.dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    T* p = static_cast<T*>(t.data_ptr());
    for (size_t i = 0; i < v.size(); ++i) p[i] = static_cast<T>(static_cast<compute_t<T>>(v[i]));
  });
}

// Integer index tensors (int64 or int32) read as int64.
inline int64_t index_at(const Tensor& idx, int64_t i) {
  return idx.dtype() == DType::int64 ? static_cast<const int64_t*>(idx.data_ptr())[i]
                                     : static_cast<const int32_t*>(idx.data_ptr())[i];
}

// Records the first bad value seen inside a parallel loop (exceptions must not
// escape an OpenMP region); the caller throws after the loop.
class BadValueFlag {
 public:
  void set(int64_t value) {
    bool expected = false;
    if (seen_.compare_exchange_strong(expected, true)) value_ = value;
  }
  bool seen() const { return seen_.load(); }
  int64_t value() const { return value_; }

 private:
  std::atomic<bool> seen_{false};
  int64_t value_ = 0;
};

}  // namespace hearth::cpu
