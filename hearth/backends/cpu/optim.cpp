// Optimizer steps on the CPU (contracts in hearth/dispatch/schemas/optim.h):
// one pass over each parameter, reading and writing every state element once.
#include "hearth/dispatch/schemas/optim.h"

#include <algorithm>
#include <cmath>
#include <type_traits>
#include <vector>

#include "hearth/backends/cpu/level_kernel_registrar.h"
#include "hearth/backends/cpu/nn_kernel_util.h"
#include "hearth/backends/cpu/parallel.h"
#include "hearth/core/half.h"

namespace hearth::cpu {
namespace {

template <typename T>
T* ptr_or_null(const Tensor& t) {
  return t.defined() ? static_cast<T*>(t.data_ptr()) : nullptr;
}

// The parameter's low-precision copy (the op's optional output): calls
// body(write) with write(i, v) storing the new float32 value v of element i
// into it, rounded as cast() rounds, or doing nothing where there is no copy,
// so the loop without one compiles as before.
template <typename T, typename Body>
void with_copy_writer(const OpCall& call, Body&& body) {
  const Tensor copy = call.outputs.empty() ? Tensor() : call.out(0);
  if constexpr (std::is_same_v<T, float>) {
    if (copy.defined() && copy.dtype() == DType::bfloat16) {
      BFloat16* c = static_cast<BFloat16*>(copy.data_ptr());
      return body([c](int64_t i, float v) { c[i] = BFloat16(v); });
    }
    if (copy.defined() && copy.dtype() == DType::float16) {
      Half* c = static_cast<Half*>(copy.data_ptr());
      return body([c](int64_t i, float v) { c[i] = Half(v); });
    }
  }
  HEARTH_CHECK(!copy.defined(), TypeError, "[optim] a ", dtype_name(copy.dtype()),
               " copy of a parameter of another dtype than float32");
  body([](int64_t, T) {});
}

void sgd_step_kernel(OpCall& call) {
  const Tensor& param = call.in(0);
  const SgdStepAttrs& a = call.attrs<SgdStepAttrs>();
  const int64_t n = param.numel();
  visit_floating(param.dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    using C = compute_t<T>;
    T* p = static_cast<T*>(param.data_ptr());
    const T* g = static_cast<const T*>(call.in(1).data_ptr());
    T* buf = ptr_or_null<T>(call.in(2));
    const C lr = static_cast<C>(a.lr), wd = static_cast<C>(a.weight_decay), mom = static_cast<C>(a.momentum);
    const C keep = static_cast<C>(1.0 - a.dampening), sign = a.maximize ? C(-1) : C(1);
    const bool use_buf = a.momentum != 0.0, init = a.init_buffer, nesterov = a.nesterov;
    with_copy_writer<T>(call, [&](auto write_copy) {
      parallel_for(n, kGrainElementwise, [&](int64_t b, int64_t e) {
        for (int64_t i = b; i < e; ++i) {
          const C pv = static_cast<C>(p[i]);
          C d = sign * static_cast<C>(g[i]) + wd * pv;
          if (use_buf) {
            const C bv = init ? d : mom * static_cast<C>(buf[i]) + keep * d;
            buf[i] = static_cast<T>(bv);
            // Later steps read the buffer as stored, so use the rounded value.
            const C stored = static_cast<C>(buf[i]);
            d = nesterov ? d + mom * stored : stored;
          }
          p[i] = static_cast<T>(pv - lr * d);
          write_copy(i, p[i]);
        }
      });
    });
  });
}

void adam_step_kernel(OpCall& call) {
  const Tensor& param = call.in(0);
  const AdamStepAttrs& a = call.attrs<AdamStepAttrs>();
  const int64_t n = param.numel();
  const double step = static_cast<double>(a.step);
  const double bias_correction1 = 1.0 - std::pow(a.beta1, step);
  const double bias_correction2 = 1.0 - std::pow(a.beta2, step);
  visit_floating(param.dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    using C = compute_t<T>;
    T* p = static_cast<T*>(param.data_ptr());
    const T* g = static_cast<const T*>(call.in(1).data_ptr());
    T* m = static_cast<T*>(call.in(2).data_ptr());
    T* v = static_cast<T*>(call.in(3).data_ptr());
    T* vmax = ptr_or_null<T>(call.in(4));
    const C beta1 = static_cast<C>(a.beta1), beta2 = static_cast<C>(a.beta2);
    const C one_minus_beta1 = static_cast<C>(1.0 - a.beta1), one_minus_beta2 = static_cast<C>(1.0 - a.beta2);
    const C eps = static_cast<C>(a.eps), sign = a.maximize ? C(-1) : C(1);
    const C step_size = static_cast<C>(a.lr / bias_correction1);
    const C bc2_sqrt = static_cast<C>(std::sqrt(bias_correction2));
    const C l2 = a.decoupled_weight_decay ? C(0) : static_cast<C>(a.weight_decay);
    const C decay = static_cast<C>(a.decoupled_weight_decay ? 1.0 - a.lr * a.weight_decay : 1.0);
    const bool amsgrad = a.amsgrad;
    with_copy_writer<T>(call, [&](auto write_copy) {
      parallel_for(n, kGrainElementwise, [&](int64_t b, int64_t e) {
        for (int64_t i = b; i < e; ++i) {
          const C pv = static_cast<C>(p[i]) * decay;
          const C gv = sign * static_cast<C>(g[i]) + l2 * pv;
          const C mv = beta1 * static_cast<C>(m[i]) + one_minus_beta1 * gv;
          const C vv = beta2 * static_cast<C>(v[i]) + one_minus_beta2 * gv * gv;
          m[i] = static_cast<T>(mv);
          v[i] = static_cast<T>(vv);
          C vd = static_cast<C>(v[i]);
          if (amsgrad) {
            vmax[i] = static_cast<T>(std::max(static_cast<C>(vmax[i]), vd));
            vd = static_cast<C>(vmax[i]);
          }
          const C denom = std::sqrt(vd) / bc2_sqrt + eps;
          p[i] = static_cast<T>(pv - step_size * (static_cast<C>(m[i]) / denom));
          write_copy(i, p[i]);
        }
      });
    });
  });
}

// The foreach ops run the single-tensor kernel on each group (with the
// group's copy, where the call has them): on the CPU the per-call cost is
// small next to the pass over memory.
template <void (*Single)(OpCall&), size_t kGroup>
void foreach_kernel(OpCall& call) {
  OpCall one;
  one.attrs_ptr = call.attrs_ptr;
  one.attrs_type = call.attrs_type;
  for (size_t base = 0; base + kGroup <= call.inputs.size(); base += kGroup) {
    one.inputs.assign(call.inputs.begin() + static_cast<std::ptrdiff_t>(base),
                      call.inputs.begin() + static_cast<std::ptrdiff_t>(base + kGroup));
    one.outputs.clear();
    if (!call.outputs.empty()) one.outputs.push_back(call.outputs.at(base / kGroup));
    if (one.inputs[0].numel() > 0) Single(one);
  }
}

// |v|^p, the term a p-norm sums (|v| itself for p = infinity, whose terms are
// combined by max).
double power_term(double v, double p) {
  v = std::abs(v);
  return p == 2.0 ? v * v : (p == 1.0 || std::isinf(p)) ? v : std::pow(v, p);
}

// The terms of x[0, n) summed (or their largest, for p = infinity) in double:
// fixed blocks, each summed on one thread, then the blocks in order, so the
// result does not depend on the number of threads.
template <typename T>
double power_sum(const T* x, int64_t n, double p) {
  constexpr int64_t kBlock = 65536;
  const bool inf = std::isinf(p);
  const int64_t blocks = (n + kBlock - 1) / kBlock;
  std::vector<double> part(static_cast<size_t>(blocks), 0.0);
  parallel_for(blocks, 1, [&](int64_t b0, int64_t b1) {
    for (int64_t b = b0; b < b1; ++b) {
      double acc = 0.0;
      const int64_t end = std::min(n, (b + 1) * kBlock);
      for (int64_t i = b * kBlock; i < end; ++i) {
        const double v = power_term(static_cast<double>(x[i]), p);
        acc = inf ? std::max(acc, v) : acc + v;
      }
      part[static_cast<size_t>(b)] = acc;
    }
  });
  double total = 0.0;
  for (double v : part) total = inf ? std::max(total, v) : total + v;
  return total;
}

// The p-norm from power_sum's result.
double norm_of(double power_sum, double p) {
  if (std::isinf(p)) return power_sum;
  return p == 1.0 ? power_sum : p == 2.0 ? std::sqrt(power_sum) : std::pow(power_sum, 1.0 / p);
}

// Each gradient's norm rounded to A (the dtype the composed norm returns),
// the norm of those, the coefficient in A, then the scaling by it rounded to
// the gradients' dtype.
void clip_grad_norm_foreach_kernel(OpCall& call) {
  const ClipGradNormAttrs& a = call.attrs<ClipGradNormAttrs>();
  const double p = a.norm_type;
  visit_floating(call.in(0).dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    using A = std::conditional_t<std::is_same_v<T, double>, double, float>;
    double norms_power = 0.0;
    for (const Tensor& g : call.inputs) {
      const A norm = static_cast<A>(norm_of(power_sum(static_cast<const T*>(g.data_ptr()), g.numel(), p), p));
      const double v = power_term(static_cast<double>(norm), p);
      norms_power = std::isinf(p) ? std::max(norms_power, v) : norms_power + v;
    }
    const A total = static_cast<A>(norm_of(norms_power, p));
    *static_cast<A*>(call.out(0).data_ptr()) = total;
    const A coef = std::min(A(1), static_cast<A>(a.max_norm) / (total + static_cast<A>(1e-6)));
    const T scale = static_cast<T>(coef);
    using C = compute_t<T>;
    for (const Tensor& g : call.inputs) {
      T* x = static_cast<T*>(g.data_ptr());
      parallel_for(g.numel(), kGrainElementwise, [&](int64_t b, int64_t e) {
        for (int64_t i = b; i < e; ++i) x[i] = static_cast<T>(static_cast<C>(x[i]) * static_cast<C>(scale));
      });
    }
  });
}

HEARTH_REGISTER_CPU_KERNEL(sgd_step, sgd_step_kernel, DTypeSet::floating());
HEARTH_REGISTER_CPU_KERNEL(sgd_step_foreach, foreach_kernel<sgd_step_kernel, 3>, DTypeSet::floating());
HEARTH_REGISTER_CPU_KERNEL(adam_step_foreach, foreach_kernel<adam_step_kernel, 5>, DTypeSet::floating());
HEARTH_REGISTER_CPU_KERNEL(adam_step, adam_step_kernel, DTypeSet::floating());
HEARTH_REGISTER_CPU_KERNEL(clip_grad_norm_foreach, clip_grad_norm_foreach_kernel, DTypeSet::floating());

}  // namespace
}  // namespace hearth::cpu
