// Fused optimizer steps on CUDA: one kernel updates a parameter and its state
// in a single pass over memory (see hearth/dispatch/schemas/optim.h for the
// exact formulas, shared with the CPU kernels).
#include <cmath>

#include "hearth/backends/cuda/loops.cuh"
#include "hearth/dispatch/registry.h"
#include "hearth/dispatch/schemas/optim.h"

namespace hearth::cuda {
namespace {

template <typename D>
__global__ void sgd_kernel(D* param, const D* grad, D* buf, int64_t n, SgdStepAttrs a) {
  using A = acc_t<D>;
  for (int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < n;
       i += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    A p = to_acc(param[i]);
    A g = to_acc(grad[i]);
    if (a.maximize) g = -g;
    A d = g + static_cast<A>(a.weight_decay) * p;
    if (a.momentum != 0.0) {
      A b = a.init_buffer ? d
                          : static_cast<A>(a.momentum) * to_acc(buf[i]) + static_cast<A>(1.0 - a.dampening) * d;
      buf[i] = from_acc<D>(b);
      const A stored = to_acc(buf[i]);  // later steps read the rounded buffer: use it now too
      d = a.nesterov ? d + static_cast<A>(a.momentum) * stored : stored;
    }
    param[i] = from_acc<D>(p - static_cast<A>(a.lr) * d);
  }
}

template <typename D>
__global__ void adam_kernel(D* param, const D* grad, D* m, D* v, D* vmax, int64_t n, AdamStepAttrs a,
                            double step_size, double bias_correction2_sqrt) {
  using A = acc_t<D>;
  const A beta1 = static_cast<A>(a.beta1), beta2 = static_cast<A>(a.beta2);
  for (int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < n;
       i += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    A p = to_acc(param[i]);
    A g = to_acc(grad[i]);
    if (a.maximize) g = -g;
    if (a.decoupled_weight_decay) p *= static_cast<A>(1.0 - a.lr * a.weight_decay);
    else g = g + static_cast<A>(a.weight_decay) * p;
    m[i] = from_acc<D>(beta1 * to_acc(m[i]) + static_cast<A>(1.0 - a.beta1) * g);
    v[i] = from_acc<D>(beta2 * to_acc(v[i]) + static_cast<A>(1.0 - a.beta2) * g * g);
    A vv = to_acc(v[i]);  // the stored (rounded) state, as the CPU kernel uses
    if (a.amsgrad) {
      vmax[i] = from_acc<D>(max(to_acc(vmax[i]), vv));
      vv = to_acc(vmax[i]);
    }
    A denom = sqrt(vv) / static_cast<A>(bias_correction2_sqrt) + static_cast<A>(a.eps);
    param[i] = from_acc<D>(p - static_cast<A>(step_size) * (to_acc(m[i]) / denom));
  }
}

void sgd_step(OpCall& call) {
  const Tensor& param = call.in(0);
  int dev = param.device().index;
  activate(dev);
  const SgdStepAttrs& a = call.attrs<SgdStepAttrs>();
  const Tensor& buf = call.inputs.size() > 2 ? call.in(2) : Tensor();
  int64_t n = param.numel();
  HEARTH_CUDA_DISPATCH_FLOATING(param.dtype(), "sgd_step", [&] {
    sgd_kernel<scalar_t><<<grid_for(n, kThreads, dev), kThreads, 0, stream(dev)>>>(
        static_cast<scalar_t*>(param.data_ptr()), static_cast<const scalar_t*>(call.in(1).data_ptr()),
        buf.defined() ? static_cast<scalar_t*>(buf.data_ptr()) : nullptr, n, a);
  });
  HEARTH_CUDA_CHECK_LAUNCH();
}

void adam_step(OpCall& call) {
  const Tensor& param = call.in(0);
  int dev = param.device().index;
  activate(dev);
  const AdamStepAttrs& a = call.attrs<AdamStepAttrs>();
  const Tensor& vmax = call.inputs.size() > 4 ? call.in(4) : Tensor();
  int64_t n = param.numel();
  const double bc1 = 1.0 - std::pow(a.beta1, static_cast<double>(a.step));
  const double bc2 = 1.0 - std::pow(a.beta2, static_cast<double>(a.step));
  HEARTH_CUDA_DISPATCH_FLOATING(param.dtype(), "adam_step", [&] {
    adam_kernel<scalar_t><<<grid_for(n, kThreads, dev), kThreads, 0, stream(dev)>>>(
        static_cast<scalar_t*>(param.data_ptr()), static_cast<const scalar_t*>(call.in(1).data_ptr()),
        static_cast<scalar_t*>(call.in(2).data_ptr()), static_cast<scalar_t*>(call.in(3).data_ptr()),
        vmax.defined() ? static_cast<scalar_t*>(vmax.data_ptr()) : nullptr, n, a, a.lr / bc1, std::sqrt(bc2));
  });
  HEARTH_CUDA_CHECK_LAUNCH();
}

DeviceKind cuda_kind() { return register_device_kind("cuda"); }
const KernelRegistrar r1("sgd_step", cuda_kind(), sgd_step, DTypeSet::floating());
const KernelRegistrar r2("adam_step", cuda_kind(), adam_step, DTypeSet::floating());

}  // namespace
}  // namespace hearth::cuda
