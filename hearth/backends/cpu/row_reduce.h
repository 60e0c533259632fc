// What the CPU row reductions share (reduce_sum, reduce_minmax, reduce_var,
// reduce_norm): input [outer, inner] contiguous, outputs [outer]. Floating
// values accumulate in double, so long float32 and half rows stay accurate.
// Long rows are cut into fixed-size chunks combined in order, so a result
// never depends on the thread count.
#pragma once

#include <algorithm>
#include <cstdint>
#include <type_traits>
#include <vector>

#include "hearth/backends/cpu/elementwise_util.h"
#include "hearth/backends/cpu/parallel.h"
#include "hearth/core/dtype.h"

namespace hearth::cpu::row_reduce {

template <typename T>
using acc_t = std::conditional_t<std::is_floating_point_v<compute_t<T>>, double, int64_t>;

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

}  // namespace hearth::cpu::row_reduce
