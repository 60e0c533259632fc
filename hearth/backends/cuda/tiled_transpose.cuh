// copy_ of a layout whose innermost destination dimension is strided in the
// source (a transpose of the last two dims, NCHW <-> NHWC): element by element,
// one side would move a whole 32-byte sector per element. Here each block
// stages a 32x32 tile in shared memory, read along the source's dense dimension
// and written along the destination's, so both sides move full lines.
#pragma once

#include <type_traits>

#include "hearth/backends/cuda/loops.cuh"

namespace hearth::cuda {

inline constexpr int kTile = 32;
inline constexpr int kTileRows = 8;  // a block is kTile x kTileRows threads, each moving kTile / kTileRows elements

struct TransposeArgs {
  int32_t rows, cols;      // rows: dense in the source; cols: dense in the destination
  int32_t src_col_stride;  // bytes
  int32_t dst_row_stride;  // bytes
  uint32_t tiles;          // row tiles * col tiles * batches
  FastDivmod col_tiles, row_tiles;
};

// T is a raw word of the element's size: the copy moves bits, no conversion.
template <typename T>
__global__ void transpose_copy_kernel(char* dst, const char* src, TransposeArgs a, OffsetCalc32<2> batch) {
  // 4-byte slots: column reads of 1- and 2-byte slots would share banks.
  using Slot = std::conditional_t<(sizeof(T) < 4), uint32_t, T>;
  __shared__ Slot tile[kTile][kTile + 1];
  constexpr int32_t elem = sizeof(T);
  for (uint32_t t = blockIdx.x; t < a.tiles; t += gridDim.x) {
    uint32_t rest, col_tile, b, row_tile;
    a.col_tiles.divmod(t, rest, col_tile);
    a.row_tiles.divmod(rest, b, row_tile);
    int32_t off[2];  // 0: destination, 1: source
    batch.get(b, off);
    const int32_t r0 = static_cast<int32_t>(row_tile) * kTile, c0 = static_cast<int32_t>(col_tile) * kTile;
    {
      const int32_t r = r0 + static_cast<int32_t>(threadIdx.x);
#pragma unroll
      for (int i = 0; i < kTile; i += kTileRows) {
        const int32_t c = c0 + static_cast<int32_t>(threadIdx.y) + i;
        if (r < a.rows && c < a.cols)
          tile[threadIdx.y + i][threadIdx.x] =
              static_cast<Slot>(*reinterpret_cast<const T*>(src + off[1] + r * elem + c * a.src_col_stride));
      }
    }
    __syncthreads();
    {
      const int32_t c = c0 + static_cast<int32_t>(threadIdx.x);
#pragma unroll
      for (int i = 0; i < kTile; i += kTileRows) {
        const int32_t r = r0 + static_cast<int32_t>(threadIdx.y) + i;
        if (r < a.rows && c < a.cols)
          *reinterpret_cast<T*>(dst + off[0] + c * elem + r * a.dst_row_stride) =
              static_cast<T>(tile[threadIdx.x][threadIdx.y + i]);
      }
    }
    __syncthreads();
  }
}

// Copies src into dst (same dtype) as a batch of tiled transposes when the
// layouts call for it (elementwise_plan.h's plan_transpose); false otherwise.
inline bool try_transpose_copy(const Tensor& dst, const Tensor& src) {
  const int64_t elem = static_cast<int64_t>(dst.element_size());
  const IterDims<2> dims = collapse_dims<2>(
      dst.shape(), {broadcast_byte_strides(dst, dst.shape()), broadcast_byte_strides(src, dst.shape())});
  TransposePlan plan;
  if (!fits_int32(dims) || !plan_transpose(dims, elem, plan)) return false;
  const uint32_t row_tiles = static_cast<uint32_t>((plan.rows + kTile - 1) / kTile);
  const uint32_t col_tiles = static_cast<uint32_t>((plan.cols + kTile - 1) / kTile);
  TransposeArgs args{static_cast<int32_t>(plan.rows),
                     static_cast<int32_t>(plan.cols),
                     static_cast<int32_t>(plan.src_col_stride),
                     static_cast<int32_t>(plan.dst_row_stride),
                     static_cast<uint32_t>(row_tiles * col_tiles * plan.batch.numel()),
                     FastDivmod(col_tiles),
                     FastDivmod(row_tiles)};
  const int device = dst.device().index;
  const unsigned blocks = grid_for(args.tiles, 1, device);
  const dim3 threads(kTile, kTileRows);
  char* d = static_cast<char*>(dst.data_ptr());
  const char* s = static_cast<const char*>(src.data_ptr());
  const OffsetCalc32<2> batch = make_offset_calc32(plan.batch);
  switch (elem) {
    case 1:
      transpose_copy_kernel<uint8_t><<<blocks, threads, 0, stream(device)>>>(d, s, args, batch);
      break;
    case 2:
      transpose_copy_kernel<uint16_t><<<blocks, threads, 0, stream(device)>>>(d, s, args, batch);
      break;
    case 4:
      transpose_copy_kernel<uint32_t><<<blocks, threads, 0, stream(device)>>>(d, s, args, batch);
      break;
    default:
      transpose_copy_kernel<uint64_t><<<blocks, threads, 0, stream(device)>>>(d, s, args, batch);
      break;
  }
  HEARTH_CUDA_CHECK_LAUNCH();
  return true;
}

}  // namespace hearth::cuda
