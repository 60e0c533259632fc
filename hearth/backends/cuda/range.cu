// arange_ and linspace_ on CUDA: each element computed from its index, with the
// CPU backend's arithmetic (int64 for integer ranges, double otherwise).
#include "hearth/backends/cuda/loops.cuh"
#include "hearth/dispatch/registry.h"
#include "hearth/dispatch/schemas/range.h"

namespace hearth::cuda {
namespace {

template <typename D>
__global__ void arange_int(D* out, int64_t n, int64_t start, int64_t step) {
  int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i < n) out[i] = static_cast<D>(start + i * step);
}

template <typename D>
__global__ void arange_double(D* out, int64_t n, double start, double step) {
  int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i < n) out[i] = from_acc<D>(static_cast<acc_t<D>>(start + static_cast<double>(i) * step));
}

template <typename D>
__global__ void linspace_kernel(D* out, int64_t n, double start, double end, double step) {
  int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i >= n) return;
  double v =
      (i < n / 2 || n == 1) ? start + step * static_cast<double>(i) : end - step * static_cast<double>(n - 1 - i);
  out[i] = from_acc<D>(static_cast<acc_t<D>>(v));
}

unsigned blocks(int64_t n) { return static_cast<unsigned>((n + kThreads - 1) / kThreads); }

void arange(OpCall& call) {
  const Tensor& t = call.out(0);
  int dev = t.device().index;
  activate(dev);
  const RangeAttrs& at = call.attrs<RangeAttrs>();
  bool integer_steps = at.start.category() != DTypeCategory::floating && at.step.category() != DTypeCategory::floating;
  HEARTH_CUDA_DISPATCH_NUMERIC(t.dtype(), "arange_", [&] {
    scalar_t* p = static_cast<scalar_t*>(t.data_ptr());
    if (std::is_integral_v<scalar_t> && integer_steps)
      arange_int<<<blocks(t.numel()), kThreads, 0, stream(dev)>>>(p, t.numel(), at.start.to_int(), at.step.to_int());
    else
      arange_double<<<blocks(t.numel()), kThreads, 0, stream(dev)>>>(p, t.numel(), at.start.to_double(),
                                                                     at.step.to_double());
  });
  HEARTH_CUDA_CHECK_LAUNCH();
}

void linspace(OpCall& call) {
  const Tensor& t = call.out(0);
  int dev = t.device().index;
  activate(dev);
  const LinspaceAttrs& at = call.attrs<LinspaceAttrs>();
  double step = at.steps > 1 ? (at.end - at.start) / static_cast<double>(at.steps - 1) : 0.0;
  HEARTH_CUDA_DISPATCH_NUMERIC(t.dtype(), "linspace_", [&] {
    linspace_kernel<<<blocks(t.numel()), kThreads, 0, stream(dev)>>>(static_cast<scalar_t*>(t.data_ptr()), at.steps,
                                                                     at.start, at.end, step);
  });
  HEARTH_CUDA_CHECK_LAUNCH();
}

DeviceKind cuda_kind() { return register_device_kind("cuda"); }
const DTypeSet kNumeric = DTypeSet::floating() | DTypeSet::integral();
HEARTH_REGISTER_KERNEL(arange_, cuda_kind(), arange, kNumeric);
HEARTH_REGISTER_KERNEL(linspace_, cuda_kind(), linspace, kNumeric);

}  // namespace
}  // namespace hearth::cuda
