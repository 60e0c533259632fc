// Embedding lookup (a row gather) and its backward (a scatter-add of rows) on
// the CPU. The backward groups positions by index first, so each weight row is
// summed by one thread in a fixed order: no atomics, and the same result for
// any thread count.
#include "hearth/dispatch/schemas/embedding.h"

#include <cstring>
#include <vector>

#include "hearth/backends/cpu/nn_kernel_util.h"
#include "hearth/backends/cpu/parallel.h"
#include "hearth/dispatch/registry.h"

namespace hearth::cpu {
namespace {

[[noreturn]] void throw_bad_index(int64_t index, int64_t V) {
  HEARTH_THROW(ValueError, "[embedding] index ", index, " is out of range for num_embeddings ", V,
               " (expected 0 <= index < ", V, ")");
}

void embedding_kernel(OpCall& call) {
  const Tensor &weight = call.in(0), &indices = call.in(1), &out = call.out(0);
  const int64_t V = weight.shape()[0], D = weight.shape()[1], K = indices.numel();
  const size_t row_bytes = static_cast<size_t>(D) * weight.element_size();
  const char* wp = static_cast<const char*>(weight.data_ptr());
  char* op = static_cast<char*>(out.data_ptr());
  BadValueFlag bad;
  parallel_for(K, std::max<int64_t>(1, kGrainElementwise / std::max<int64_t>(D, 1)), [&](int64_t b, int64_t e) {
    for (int64_t k = b; k < e; ++k) {
      const int64_t v = index_at(indices, k);
      if (v < 0 || v >= V) {
        bad.set(v);
        continue;
      }
      std::memcpy(op + k * row_bytes, wp + v * row_bytes, row_bytes);
    }
  });
  if (bad.seen()) throw_bad_index(bad.value(), V);
}

void embedding_backward_kernel(OpCall& call) {
  const Tensor &grad = call.in(0), &indices = call.in(1), &gw = call.out(0);
  const int64_t padding_idx = call.attrs<EmbeddingAttrs>().padding_idx;
  const int64_t V = gw.shape()[0], D = gw.shape()[1], K = indices.numel();
  // Counting sort of positions by index: positions of v are order[start[v] .. start[v + 1]).
  std::vector<int64_t> start(V + 1, 0), order(K);
  for (int64_t k = 0; k < K; ++k) {
    const int64_t v = index_at(indices, k);
    if (v < 0 || v >= V) throw_bad_index(v, V);
    ++start[v + 1];
  }
  for (int64_t v = 0; v < V; ++v) start[v + 1] += start[v];
  {
    std::vector<int64_t> next(start.begin(), start.end() - 1);
    for (int64_t k = 0; k < K; ++k) order[next[index_at(indices, k)]++] = k;
  }
  visit_floating(gw.dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    using Cm = compute_t<T>;
    const T* gp = static_cast<const T*>(grad.data_ptr());
    T* wp = static_cast<T*>(gw.data_ptr());
    parallel_for(V, std::max<int64_t>(1, kGrainElementwise / std::max<int64_t>(D, 1)), [&](int64_t b, int64_t e) {
      std::vector<Cm> acc(D);
      for (int64_t v = b; v < e; ++v) {
        std::fill(acc.begin(), acc.end(), Cm(0));
        if (v != padding_idx) {
          for (int64_t j = start[v]; j < start[v + 1]; ++j) {
            const T* row = gp + order[j] * D;
            for (int64_t d = 0; d < D; ++d) acc[d] += static_cast<Cm>(row[d]);
          }
        }
        T* dst = wp + v * D;
        for (int64_t d = 0; d < D; ++d) dst[d] = static_cast<T>(acc[d]);
      }
    });
  });
}

HEARTH_REGISTER_KERNEL(embedding, kCpu, embedding_kernel, DTypeSet::all());
HEARTH_REGISTER_KERNEL(embedding_backward, kCpu, embedding_backward_kernel, DTypeSet::floating());

}  // namespace
}  // namespace hearth::cpu
