// Philox fills on CUDA, element-for-element the same as the CPU backend (see
// hearth/dispatch/schemas/random.h for the mapping).
#include "hearth/backends/cuda/loops.cuh"
#include "hearth/backends/cuda/philox.cuh"
#include "hearth/backends/cuda/step_graph.h"
#include "hearth/core/dtype_visit.h"
#include "hearth/dispatch/registry.h"
#include "hearth/dispatch/schemas/random.h"

namespace hearth::cuda {
namespace {

DeviceKind cuda_kind() { return register_device_kind("cuda"); }

template <typename D>
__global__ void uniform_kernel(D* out, int64_t n, uint64_t seed, uint64_t offset, const uint64_t* shift, float lo,
                               float span) {
  int64_t c = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (4 * c >= n) return;
  const PhiloxOut r = philox4x32_10(philox_offset(offset, shift) + c, seed);
#pragma unroll
  for (int k = 0; k < 4; ++k) {
    int64_t i = 4 * c + k;
    if (i < n) out[i] = from_acc<D>(lo + span * (static_cast<float>(r.x[k] >> 8) * (1.0f / 16777216.0f)));
  }
}

__global__ void uniform_double_kernel(double* out, int64_t n, uint64_t seed, uint64_t offset, const uint64_t* shift,
                                      double lo, double hi) {
  int64_t c = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (2 * c >= n) return;
  const PhiloxOut r = philox4x32_10(philox_offset(offset, shift) + c, seed);
#pragma unroll
  for (int k = 0; k < 2; ++k) {
    int64_t i = 2 * c + k;
    uint64_t v = (static_cast<uint64_t>(r.x[2 * k]) << 32 | r.x[2 * k + 1]) >> 11;
    if (i < n) out[i] = lo + (hi - lo) * (static_cast<double>(v) * (1.0 / 9007199254740992.0));
  }
}

template <typename D>
__global__ void normal_kernel(D* out, int64_t n, uint64_t seed, uint64_t offset, const uint64_t* shift, double mean,
                              double std) {
  int64_t c = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (2 * c >= n) return;
  const PhiloxOut r = philox4x32_10(philox_offset(offset, shift) + c, seed);
#pragma unroll
  for (int k = 0; k < 2; ++k) {
    int64_t i = 2 * c + k;
    if (i >= n) continue;
    double u1 = (static_cast<double>(r.x[2 * k] >> 8) + 1.0) * (1.0 / 16777216.0);
    double u2 = static_cast<double>(r.x[2 * k + 1] >> 8) * (1.0 / 16777216.0);
    double z = sqrt(-2.0 * log(u1)) * cospi(2.0 * u2);
    out[i] = from_acc<D>(static_cast<acc_t<D>>(mean + std * z));
  }
}

template <typename D>
__global__ void randint_kernel(D* out, int64_t n, uint64_t seed, uint64_t offset, const uint64_t* shift, int64_t low,
                               uint64_t range) {
  int64_t c = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (2 * c >= n) return;
  const PhiloxOut r = philox4x32_10(philox_offset(offset, shift) + c, seed);
#pragma unroll
  for (int k = 0; k < 2; ++k) {
    int64_t i = 2 * c + k;
    uint64_t v = (static_cast<uint64_t>(r.x[2 * k]) << 32 | r.x[2 * k + 1]) % range;
    if (i < n) out[i] = from_acc<D>(static_cast<acc_t<D>>(low + static_cast<int64_t>(v)));
  }
}

unsigned blocks_for(int64_t counters) { return static_cast<unsigned>((counters + kThreads - 1) / kThreads); }

void uniform_op(OpCall& call) {
  const Tensor& t = call.out(0);
  activate(t.device().index);
  const RandomAttrs& a = call.attrs<RandomAttrs>();
  const int64_t n = t.numel();
  cudaStream_t s = stream(t.device().index);
  visit_dtype(t.dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    using D = dev_t<T>;
    if constexpr (std::is_same_v<D, double>) {
      uniform_double_kernel<<<blocks_for((n + 1) / 2), kThreads, 0, s>>>(
          static_cast<double*>(t.data_ptr()), n, a.seed, a.offset, philox_offset_shift(t.device().index), a.a, a.b);
    } else if constexpr (std::is_floating_point_v<acc_t<D>>) {
      uniform_kernel<D><<<blocks_for((n + 3) / 4), kThreads, 0, s>>>(
          static_cast<D*>(t.data_ptr()), n, a.seed, a.offset, philox_offset_shift(t.device().index),
          static_cast<float>(a.a), static_cast<float>(a.b - a.a));
    }
  });
  HEARTH_CUDA_CHECK_LAUNCH();
}

void normal_op(OpCall& call) {
  const Tensor& t = call.out(0);
  activate(t.device().index);
  const RandomAttrs& a = call.attrs<RandomAttrs>();
  const int64_t n = t.numel();
  visit_dtype(t.dtype(), [&](auto tag) {
    using D = dev_t<typename decltype(tag)::type>;
    if constexpr (std::is_floating_point_v<acc_t<D>>)
      normal_kernel<D><<<blocks_for((n + 1) / 2), kThreads, 0, stream(t.device().index)>>>(
          static_cast<D*>(t.data_ptr()), n, a.seed, a.offset, philox_offset_shift(t.device().index), a.a, a.b);
  });
  HEARTH_CUDA_CHECK_LAUNCH();
}

void randint_op(OpCall& call) {
  const Tensor& t = call.out(0);
  activate(t.device().index);
  const RandomAttrs& a = call.attrs<RandomAttrs>();
  const int64_t n = t.numel();
  const int64_t low = static_cast<int64_t>(a.a);
  const uint64_t range = static_cast<uint64_t>(static_cast<int64_t>(a.b) - low);
  visit_dtype(t.dtype(), [&](auto tag) {
    using D = dev_t<typename decltype(tag)::type>;
    randint_kernel<D><<<blocks_for((n + 1) / 2), kThreads, 0, stream(t.device().index)>>>(
        static_cast<D*>(t.data_ptr()), n, a.seed, a.offset, philox_offset_shift(t.device().index), low, range);
  });
  HEARTH_CUDA_CHECK_LAUNCH();
}

HEARTH_REGISTER_KERNEL(uniform_, cuda_kind(), uniform_op, DTypeSet::floating());
HEARTH_REGISTER_KERNEL(normal_, cuda_kind(), normal_op, DTypeSet::floating());
HEARTH_REGISTER_KERNEL(randint_, cuda_kind(), randint_op, DTypeSet::all());

}  // namespace
}  // namespace hearth::cuda
