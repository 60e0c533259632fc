// The grid-stride row loop of the CUDA row kernels (softmax, layer norm,
// attention softmax, embedding, the losses, batch norm) and the grid it is
// launched with. A block holds blockDim.x / tpr groups of `tpr` threads (a
// power of two), one row per group; each step of the loop covers gridDim.x
// blocks of rows, and the grid strides on until every row is done.
#pragma once

#include <algorithm>
#include <cstdint>

#include "hearth/backends/cuda/context.h"

namespace hearth::cuda::nn {

inline int sm_count(int device) { return context(device).props.multiProcessorCount; }

// Host: the blocks that cover `rows` at `rows_per_block` rows a block, capped
// at 32 per SM (the loop below walks the rest).
inline unsigned row_grid(int64_t rows, int64_t rows_per_block, int device) {
  return static_cast<unsigned>(
      std::min<int64_t>((rows + rows_per_block - 1) / rows_per_block, static_cast<int64_t>(sm_count(device)) * 32));
}

// Row group of this thread under a plan: row index within the block's rows, thread within the row.
struct GroupPos {
  int group, t;
};
__device__ __forceinline__ GroupPos group_pos(int tpr) {
  return {static_cast<int>(threadIdx.x) / tpr, static_cast<int>(threadIdx.x) % tpr};
}

// first, then on by gridDim.x * per_block rows, while below `stop`: the loop
// `for (row = first; row < stop; row += gridDim.x * per_block)` as a range-for.
template <typename PerBlock>
struct RowStride {
  int64_t first, stop;
  PerBlock per_block;
  struct Iter {
    int64_t row, stop;
    PerBlock per_block;
    __device__ int64_t operator*() const { return row; }
    __device__ Iter& operator++() {
      row += static_cast<int64_t>(gridDim.x) * per_block;
      return *this;
    }
    __device__ bool operator!=(const Iter&) const { return row < stop; }
  };
  __device__ Iter begin() const { return {first, stop, per_block}; }
  __device__ Iter end() const { return {stop, stop, per_block}; }
};

// The steps of this block over rows [0, rows): at each, the first row of the
// block's groups. A group's row is base + group_pos(tpr).group, inactive from
// `rows` on. Every thread of the block takes the same steps, so the body may
// synchronise the block (a group wider than a warp reduces through shared memory):
//   for (const int64_t base : block_row_steps(M, tpr)) { const int64_t row = base + gp.group; ... }
__device__ __forceinline__ RowStride<int> block_row_steps(int64_t rows, int tpr) {
  const int rows_per_block = blockDim.x / tpr;
  return {static_cast<int64_t>(blockIdx.x) * rows_per_block, rows, rows_per_block};
}

// The rows of this thread's group (gp = group_pos(tpr)), below `rows`. Groups
// stop independently, so the body must not synchronise the block.
__device__ __forceinline__ RowStride<int> group_rows(int64_t rows, int tpr, GroupPos gp) {
  const int rows_per_block = blockDim.x / tpr;
  return {static_cast<int64_t>(blockIdx.x) * rows_per_block + gp.group, rows, rows_per_block};
}

// One thread per row, below `rows`.
__device__ __forceinline__ RowStride<unsigned> thread_rows(int64_t rows) {
  return {static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x, rows, blockDim.x};
}

}  // namespace hearth::cuda::nn
