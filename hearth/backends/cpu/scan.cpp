// cumsum on the CPU over x [outer, n, inner]: each task owns a block of
// columns of one outer slice and walks n in order, keeping running sums in
// double (int64 for integers) so long scans of float32 and half stay accurate.
#include "hearth/dispatch/schemas/scan.h"

#include <vector>

#include "hearth/backends/cpu/parallel.h"
#include "hearth/core/dtype_visit.h"
#include "hearth/dispatch/registry.h"

namespace hearth::cpu {
namespace {

constexpr int64_t kColumnBlock = 256;

void cumsum_kernel(OpCall& call) {
  const Tensor& x = call.in(0);
  const Tensor& out = call.out(0);
  const bool reverse = call.attrs<ScanAttrs>().reverse;
  const int64_t outer = x.shape()[0], n = x.shape()[1], inner = x.shape()[2];
  const int64_t blocks = (inner + kColumnBlock - 1) / kColumnBlock;
  visit_dtype(x.dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    using C = compute_t<T>;
    using Acc = std::conditional_t<std::is_floating_point_v<C>, double, int64_t>;
    const T* in = static_cast<const T*>(x.data_ptr());
    T* o = static_cast<T*>(out.data_ptr());
    const int64_t grain = std::max<int64_t>(1, kGrainElementwise / std::max<int64_t>(n * kColumnBlock, 1));
    parallel_for(outer * blocks, grain, [&](int64_t tb, int64_t te) {
      std::vector<Acc> acc(kColumnBlock);
      for (int64_t t = tb; t < te; ++t) {
        const int64_t s = t / blocks;
        const int64_t c0 = (t % blocks) * kColumnBlock;
        const int64_t width = std::min(kColumnBlock, inner - c0);
        std::fill(acc.begin(), acc.begin() + width, Acc(0));
        for (int64_t step = 0; step < n; ++step) {
          const int64_t j = reverse ? n - 1 - step : step;
          const int64_t base = (s * n + j) * inner + c0;
          for (int64_t c = 0; c < width; ++c) {
            acc[c] += static_cast<Acc>(static_cast<C>(in[base + c]));
            o[base + c] = static_cast<T>(static_cast<C>(acc[c]));
          }
        }
      }
    });
  });
}

HEARTH_REGISTER_KERNEL(cumsum, kCpu, cumsum_kernel, DTypeSet::floating() | DTypeSet{DType::int64});

}  // namespace
}  // namespace hearth::cpu
