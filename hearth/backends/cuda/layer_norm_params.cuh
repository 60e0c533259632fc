// Layer norm's weight and bias gradients, shared by layer_norm.cu and the
// kernels that end in a layer norm (dropout_add_layer_norm.cu): column sums of
// g * xhat and g over fixed row chunks, then the chunks summed in order, so
// the result does not depend on how many blocks ran.
#pragma once

#include "hearth/backends/cuda/nn_util.cuh"

namespace hearth::cuda::nn {

// Column sums of g xhat and g over row chunk blockIdx.y (of gridDim.y), 32
// columns per block: partials [2][chunks][K].
template <typename D>
__global__ void layer_norm_param_partials_kernel(const D* __restrict__ g, const D* __restrict__ x,
                                                 const acc_t<D>* __restrict__ mean, const acc_t<D>* __restrict__ rstd,
                                                 int64_t M, int64_t K, acc_t<D>* partials) {
  using A = acc_t<D>;
  __shared__ A smem[256];
  const int64_t chunks = gridDim.y, chunk = blockIdx.y;
  const int64_t j = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  const int64_t r0 = M * chunk / chunks, r1 = M * (chunk + 1) / chunks;
  A sw = 0, sb = 0;
  if (j < K) {
    for (int64_t r = r0 + threadIdx.y; r < r1; r += blockDim.y) {
      const A gv = to_acc(g[r * K + j]);
      sw += gv * ((to_acc(x[r * K + j]) - mean[r]) * rstd[r]);
      sb += gv;
    }
  }
  sw = column_reduce(sw, SumOp{}, smem);
  sb = column_reduce(sb, SumOp{}, smem);
  if (threadIdx.y == 0 && j < K) {
    partials[chunk * K + j] = sw;
    partials[(chunks + chunk) * K + j] = sb;
  }
}

template <typename D>
__global__ void layer_norm_param_final_kernel(const acc_t<D>* __restrict__ partials, int64_t chunks, int64_t K,
                                              Param<D> gw, Param<D> gb) {
  for (int64_t j = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; j < K;
       j += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    double sw = 0, sb = 0;
    for (int64_t k = 0; k < chunks; ++k) {
      sw += partials[k * K + j];
      sb += partials[(chunks + k) * K + j];
    }
    if (gw.p) gw.set(j, sw);
    if (gb.p) gb.set(j, sb);
  }
}

}  // namespace hearth::cuda::nn
