// Dropout on CUDA. Element i keeps when its uniform draw u_i (lane i%4 of
// philox(offset + i/4), u = (bits >> 8) * 2^-24) is >= p, exactly as the CPU
// kernel decides, so the mask is bit-identical to the CPU's for the same seed
// and offset. The float comparison u >= p is done on integers: u is a multiple
// of 2^-24, so u >= p exactly when (bits >> 8) >= ceil(p * 2^24). One thread per
// Philox counter handles its four elements, with one vector load and store when
// aligned.
#include <cmath>

#include "hearth/backends/cuda/nn_util.cuh"
#include "hearth/backends/cuda/philox.cuh"
#include "hearth/backends/cuda/step_graph.h"
#include "hearth/dispatch/registry.h"
#include "hearth/dispatch/schemas/dropout.h"

namespace hearth::cuda {
namespace {

using namespace nn;

DeviceKind cuda_kind() { return register_device_kind("cuda"); }

template <typename D>
__global__ void dropout_kernel(const D* __restrict__ x, D* __restrict__ y, bool* __restrict__ mask, int64_t n,
                               uint64_t seed, uint64_t offset, const uint64_t* shift, uint32_t threshold,
                               acc_t<D> scale, bool vec) {
  offset = philox_offset(offset, shift);
  const int64_t counters = (n + 3) / 4;
  for (int64_t c = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; c < counters;
       c += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    const PhiloxOut r = philox4x32_10(offset + static_cast<uint64_t>(c), seed);
    const int64_t i0 = 4 * c;
    bool keep[4];
#pragma unroll
    for (int k = 0; k < 4; ++k) keep[k] = (r.x[k] >> 8) >= threshold;
    if (vec && i0 + 3 < n) {
      const Pack<D, 4> xv = reinterpret_cast<const Pack<D, 4>*>(x)[c];
      Pack<D, 4> yv;
      uint32_t bits = 0;
#pragma unroll
      for (int k = 0; k < 4; ++k) {
        yv.v[k] = from_acc<D>(keep[k] ? to_acc(xv.v[k]) * scale : acc_t<D>(0));
        bits |= static_cast<uint32_t>(keep[k]) << (8 * k);
      }
      reinterpret_cast<Pack<D, 4>*>(y)[c] = yv;
      reinterpret_cast<uint32_t*>(mask)[c] = bits;  // four bools, lane k in byte k
    } else {
      for (int k = 0; k < 4 && i0 + k < n; ++k) {
        y[i0 + k] = from_acc<D>(keep[k] ? to_acc(x[i0 + k]) * scale : acc_t<D>(0));
        mask[i0 + k] = keep[k];
      }
    }
  }
}

template <typename D>
__global__ void dropout_backward_kernel(const D* __restrict__ g, const bool* __restrict__ mask, D* __restrict__ gx,
                                        int64_t n, acc_t<D> scale, bool vec) {
  const int64_t groups = (n + 3) / 4;
  for (int64_t c = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; c < groups;
       c += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    const int64_t i0 = 4 * c;
    if (vec && i0 + 3 < n) {
      const Pack<D, 4> gv = reinterpret_cast<const Pack<D, 4>*>(g)[c];
      const uint32_t bits = reinterpret_cast<const uint32_t*>(mask)[c];
      Pack<D, 4> ov;
#pragma unroll
      for (int k = 0; k < 4; ++k)
        ov.v[k] = from_acc<D>((bits >> (8 * k)) & 0xFFu ? to_acc(gv.v[k]) * scale : acc_t<D>(0));
      reinterpret_cast<Pack<D, 4>*>(gx)[c] = ov;
    } else {
      for (int k = 0; k < 4 && i0 + k < n; ++k)
        gx[i0 + k] = from_acc<D>(mask[i0 + k] ? to_acc(g[i0 + k]) * scale : acc_t<D>(0));
    }
  }
}

bool aligned_to(const void* p, size_t bytes) { return reinterpret_cast<uintptr_t>(p) % bytes == 0; }

unsigned groups_blocks(int64_t n, int device) {
  const int64_t groups = (n + 3) / 4;
  return row_grid(groups, 256, device);
}

void dropout_forward(OpCall& call) {
  const Tensor &x = call.in(0), &y = call.out(0), &mask = call.out(1);
  const DropoutAttrs& a = call.attrs<DropoutAttrs>();
  const int device = x.device().index;
  activate(device);
  const int64_t n = x.numel();
  if (n == 0) return;
  const uint32_t threshold = static_cast<uint32_t>(std::ceil(a.p * 16777216.0));
  HEARTH_CUDA_DISPATCH_FLOATING(x.dtype(), "dropout", [&] {
    using D = scalar_t;
    const bool vec = aligned_to(x.data_ptr(), 4 * sizeof(D)) && aligned_to(y.data_ptr(), 4 * sizeof(D)) &&
                     aligned_to(mask.data_ptr(), 4);
    dropout_kernel<D><<<groups_blocks(n, device), 256, 0, stream(device)>>>(
        static_cast<const D*>(x.data_ptr()), static_cast<D*>(y.data_ptr()), static_cast<bool*>(mask.data_ptr()), n,
        a.seed, a.offset, philox_offset_shift(device), threshold, static_cast<acc_t<D>>(1.0 / (1.0 - a.p)), vec);
    HEARTH_CUDA_CHECK_LAUNCH();
  });
}

void dropout_backward(OpCall& call) {
  const Tensor &g = call.in(0), &mask = call.in(1), &gx = call.out(0);
  const double p = call.attrs<DropoutAttrs>().p;
  const int device = g.device().index;
  activate(device);
  const int64_t n = g.numel();
  if (n == 0) return;
  HEARTH_CUDA_DISPATCH_FLOATING(g.dtype(), "dropout_backward", [&] {
    using D = scalar_t;
    const bool vec = aligned_to(g.data_ptr(), 4 * sizeof(D)) && aligned_to(gx.data_ptr(), 4 * sizeof(D)) &&
                     aligned_to(mask.data_ptr(), 4);
    dropout_backward_kernel<D><<<groups_blocks(n, device), 256, 0, stream(device)>>>(
        static_cast<const D*>(g.data_ptr()), static_cast<const bool*>(mask.data_ptr()), static_cast<D*>(gx.data_ptr()),
        n, static_cast<acc_t<D>>(1.0 / (1.0 - p)), vec);
    HEARTH_CUDA_CHECK_LAUNCH();
  });
}

HEARTH_REGISTER_KERNEL(dropout, cuda_kind(), dropout_forward, DTypeSet::floating());
HEARTH_REGISTER_KERNEL(dropout_backward, cuda_kind(), dropout_backward, DTypeSet::floating());

}  // namespace
}  // namespace hearth::cuda
