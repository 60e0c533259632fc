// Row reductions on the CPU: input [outer, inner] contiguous, output [outer].
// Floating sums accumulate in double for float32 (and float for the half types
// via double too) so long rows stay accurate.
#include <vector>

#include "hearth/backends/cpu/parallel.h"
#include "hearth/dispatch/registry.h"

namespace hearth::cpu {
namespace {

template <typename T>
using acc_t = std::conditional_t<std::is_floating_point_v<compute_t<T>>, double, int64_t>;

void sum_kernel(OpCall& call) {
  const Tensor& x = call.in(0);
  const Tensor& out = call.out(0);
  const int64_t outer = x.shape()[0], inner = x.shape()[1];
  visit_dtype(x.dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    const T* in = static_cast<const T*>(x.data_ptr());
    T* o = static_cast<T*>(out.data_ptr());
    if (outer == 1) {  // one long row: fixed-size chunks, so the result is independent of thread count
      constexpr int64_t kChunk = 65536;
      const int64_t chunks = (inner + kChunk - 1) / kChunk;
      std::vector<acc_t<T>> partial(chunks, 0);
      parallel_for(chunks, 1, [&](int64_t cb, int64_t ce) {
        for (int64_t c = cb; c < ce; ++c) {
          acc_t<T> acc = 0;
          for (int64_t i = c * kChunk; i < std::min(inner, (c + 1) * kChunk); ++i)
            acc += static_cast<acc_t<T>>(static_cast<compute_t<T>>(in[i]));
          partial[c] = acc;
        }
      });
      acc_t<T> total = 0;
      for (auto v : partial) total += v;
      o[0] = static_cast<T>(static_cast<compute_t<T>>(total));
      return;
    }
    parallel_for(outer, std::max<int64_t>(1, 32768 / std::max<int64_t>(inner, 1)), [&](int64_t b, int64_t e) {
      for (int64_t r = b; r < e; ++r) {
        const T* row = in + r * inner;
        acc_t<T> acc = 0;
        for (int64_t i = 0; i < inner; ++i) acc += static_cast<acc_t<T>>(static_cast<compute_t<T>>(row[i]));
        o[r] = static_cast<T>(static_cast<compute_t<T>>(acc));
      }
    });
  });
}

const KernelRegistrar reg_sum("sum", kCpu, sum_kernel, DTypeSet::floating() | DTypeSet{DType::int64});

}  // namespace
}  // namespace hearth::cpu
