// Fused optimizer steps and gradient clipping on CUDA (formulas in
// hearth/dispatch/schemas/optim.h, shared with the CPU kernels). Every update
// is multi-tensor: a launch covers up to kMaxTensors parameters, each cut into
// chunks of kChunk elements, one block per chunk, with the tensors' addresses
// passed in the kernel's arguments. A step of ResNet-50 (161 parameters) is then 5 launches instead
// of 161, and each element is read and written once. The single-tensor ops are
// the same launch with one tensor. A parameter's low-precision copy (autocast's
// cast of it, hearth/ops/param_half_copies.h) is written in the same loop.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <type_traits>
#include <utility>
#include <vector>

#include "hearth/backends/cuda/loops.cuh"
#include "hearth/backends/cuda/nn_util.cuh"
#include "hearth/dispatch/registry.h"
#include "hearth/dispatch/schemas/optim.h"

namespace hearth::cuda {
namespace {

inline constexpr int kMaxTensors = 36;    // keeps the argument block under the 4 KiB every GPU accepts
inline constexpr int kMaxBlocks = 320;    // chunks per launch
inline constexpr int64_t kChunk = 65536;  // elements per block

// The dtype of a parameter's low-precision copy (the ops' optional output).
enum CopyKind : unsigned char { kNoCopy = 0, kBf16Copy = 1, kFp16Copy = 2 };

// Depth: tensors per parameter (param, grad, state...). Unused slots are null.
template <int Depth>
struct TensorLists {
  void* ptr[Depth][kMaxTensors];
  void* copy[kMaxTensors];  // the parameter's low-precision copy, or null
  int64_t numel[kMaxTensors];
  bool aligned[kMaxTensors];  // every tensor of the slot starts on a 16-byte boundary
  unsigned char copy_kind[kMaxTensors];
  unsigned char block_tensor[kMaxBlocks];
  int block_chunk[kMaxBlocks];
};

template <typename D>
struct alignas(sizeof(D) * 4) Quad {
  D v[4];
};

// Stores the parameter's new values (4 from element i on when `quad`) into
// its copy, rounded as the cast kernel rounds (from_acc). Copies exist only
// for float32 parameters; other instantiations store nothing.
template <typename D, typename H, bool kQuad>
__device__ __forceinline__ void store_copy_as(void* copy, int64_t i, const D* v) {
  if constexpr (kQuad) {
    Quad<H> q;
#pragma unroll
    for (int l = 0; l < 4; ++l) q.v[l] = from_acc<H>(v[l]);
    *reinterpret_cast<Quad<H>*>(static_cast<H*>(copy) + i) = q;
  } else {
    static_cast<H*>(copy)[i] = from_acc<H>(v[0]);
  }
}

template <typename D, bool kQuad>
__device__ __forceinline__ void store_copy(void* copy, unsigned char kind, int64_t i, const D* v) {
  if constexpr (std::is_same_v<D, float>) {
    if (kind == kBf16Copy)
      store_copy_as<D, __nv_bfloat16, kQuad>(copy, i, v);
    else if (kind == kFp16Copy)
      store_copy_as<D, __half, kQuad>(copy, i, v);
  }
}

// Runs update(values...) on every element of this block's chunk, one
// reference per tensor of the slot (a null tensor gets a dummy). When the
// slot's tensors are aligned, each thread moves four elements per access, so
// four times the bytes are in flight per thread: the steps are bound by
// memory bandwidth, and one element per access left them at about half of it.
// `writes` says which tensors the update changes; only those are stored.
// Tensor 0 is the parameter: where the slot has a copy of it, its new value
// is stored there too, from the registers it was just written from.
template <typename D, int Depth, typename Update>
__device__ __forceinline__ void for_chunk(const TensorLists<Depth>& tl, const bool (&writes)[Depth], Update&& update) {
  const int t = tl.block_tensor[blockIdx.x];
  const int64_t begin = static_cast<int64_t>(tl.block_chunk[blockIdx.x]) * kChunk;
  const int64_t end = min(begin + kChunk, tl.numel[t]);
  D* ptr[Depth];
#pragma unroll
  for (int k = 0; k < Depth; ++k) ptr[k] = static_cast<D*>(tl.ptr[k][t]);
  void* const copy = tl.copy[t];
  const unsigned char copy_kind = tl.copy_kind[t];
  int64_t scalar_from = begin;
  if (tl.aligned[t]) {
    // Chunks start at multiples of kChunk (a multiple of 4), so quads stay aligned.
    const int64_t quads = (end - begin) / 4;
    for (int64_t q = threadIdx.x; q < quads; q += blockDim.x) {
      const int64_t i = begin + 4 * q;
      Quad<D> r[Depth];
#pragma unroll
      for (int k = 0; k < Depth; ++k)
        if (ptr[k]) r[k] = *reinterpret_cast<const Quad<D>*>(ptr[k] + i);
#pragma unroll
      for (int l = 0; l < 4; ++l) [&]<int... K>(std::integer_sequence<int, K...>) {
          update(r[K].v[l]...);
        }
      (std::make_integer_sequence<int, Depth>{});
#pragma unroll
      for (int k = 0; k < Depth; ++k)
        if (writes[k] && ptr[k]) *reinterpret_cast<Quad<D>*>(ptr[k] + i) = r[k];
      if (copy) store_copy<D, true>(copy, copy_kind, i, r[0].v);
    }
    scalar_from = begin + 4 * quads;
  }
  D dummy[Depth] = {};
  for (int64_t i = scalar_from + threadIdx.x; i < end; i += blockDim.x) {
    [&]<int... K>(std::integer_sequence<int, K...>) { update((ptr[K] ? ptr[K][i] : dummy[K])...); }
    (std::make_integer_sequence<int, Depth>{});
    if (copy) store_copy<D, false>(copy, copy_kind, i, ptr[0] + i);
  }
}

template <typename D>
__global__ void sgd_kernel(TensorLists<3> tl, SgdStepAttrs a) {
  using A = acc_t<D>;
  constexpr bool kWrites[3] = {true, false, true};
  for_chunk<D>(tl, kWrites, [&](D& param, const D& grad, D& buf) {
    const A p = to_acc(param);
    A g = to_acc(grad);
    if (a.maximize) g = -g;
    A d = g + static_cast<A>(a.weight_decay) * p;
    if (a.momentum != 0.0) {
      const A b = a.init_buffer ? d : static_cast<A>(a.momentum) * to_acc(buf) + static_cast<A>(1.0 - a.dampening) * d;
      buf = from_acc<D>(b);
      const A stored = to_acc(buf);  // later steps read the rounded buffer: use it now too
      d = a.nesterov ? d + static_cast<A>(a.momentum) * stored : stored;
    }
    param = from_acc<D>(p - static_cast<A>(a.lr) * d);
  });
}

template <typename D>
__global__ void adam_kernel(TensorLists<5> tl, AdamStepAttrs a, double step_size, double bias_correction2_sqrt) {
  using A = acc_t<D>;
  const A beta1 = static_cast<A>(a.beta1), beta2 = static_cast<A>(a.beta2);
  constexpr bool kWrites[5] = {true, false, true, true, true};
  for_chunk<D>(tl, kWrites, [&](D& param, const D& grad, D& m, D& v, D& vmax) {
    A p = to_acc(param);
    A g = to_acc(grad);
    if (a.maximize) g = -g;
    if (a.decoupled_weight_decay)
      p *= static_cast<A>(1.0 - a.lr * a.weight_decay);
    else
      g = g + static_cast<A>(a.weight_decay) * p;
    m = from_acc<D>(beta1 * to_acc(m) + static_cast<A>(1.0 - a.beta1) * g);
    v = from_acc<D>(beta2 * to_acc(v) + static_cast<A>(1.0 - a.beta2) * g * g);
    A vv = to_acc(v);  // the stored (rounded) state, as the CPU kernel uses
    if (a.amsgrad) {
      vmax = from_acc<D>(max(to_acc(vmax), vv));
      vv = to_acc(vmax);
    }
    const A denom = sqrt(vv) / static_cast<A>(bias_correction2_sqrt) + static_cast<A>(a.eps);
    param = from_acc<D>(p - static_cast<A>(step_size) * (to_acc(m) / denom));
  });
}

// The kernels' arguments must stay under the 4 KiB every GPU accepts.
static_assert(sizeof(TensorLists<5>) + sizeof(AdamStepAttrs) + 2 * sizeof(double) <= 4096);
static_assert(sizeof(TensorLists<3>) + sizeof(SgdStepAttrs) <= 4096);

CopyKind copy_kind(const Tensor& copy) {
  if (!copy.defined()) return kNoCopy;
  if (copy.dtype() == DType::bfloat16) return kBf16Copy;
  HEARTH_CHECK(copy.dtype() == DType::float16, TypeError, "[optim] a parameter's copy in ", dtype_name(copy.dtype()),
               "; expected bfloat16 or float16");
  return kFp16Copy;
}

// Packs the groups of `call` (Depth inputs each) into launches of `launch`.
// `copies`: whether the call's outputs are the parameters' copies, one per
// group (the steps); clipping's one output is not.
template <int Depth, bool kCopies = true, typename Launch>
void for_each_launch(const OpCall& call, Launch&& launch) {
  TensorLists<Depth> tl{};
  int tensors = 0, blocks = 0;
  auto flush = [&] {
    if (blocks > 0) launch(tl, blocks);
    tl = TensorLists<Depth>{};
    tensors = blocks = 0;
  };
  for (size_t base = 0; base + Depth <= call.inputs.size(); base += Depth) {
    const int64_t n = call.in(base).numel();
    if (n == 0) continue;
    if (tensors == kMaxTensors) flush();
    bool aligned = true;
    for (int k = 0; k < Depth; ++k) {
      const Tensor& t = call.in(base + k);
      tl.ptr[k][tensors] = t.defined() ? t.data_ptr() : nullptr;
      if (t.defined()) aligned = aligned && reinterpret_cast<uintptr_t>(t.data_ptr()) % 16 == 0;
    }
    // One output per group where the call has any (hearth/dispatch/schemas/optim.h).
    const Tensor copy = !kCopies || call.outputs.empty() ? Tensor() : call.outputs.at(base / Depth);
    const CopyKind kind = copy_kind(copy);
    HEARTH_CHECK(kind == kNoCopy || call.in(base).dtype() == DType::float32, TypeError,
                 "[optim] a parameter's low-precision copy needs a float32 parameter");
    tl.copy[tensors] = kind == kNoCopy ? nullptr : copy.data_ptr();
    tl.copy_kind[tensors] = kind;
    if (kind != kNoCopy) aligned = aligned && reinterpret_cast<uintptr_t>(copy.data_ptr()) % 16 == 0;
    tl.numel[tensors] = n;
    tl.aligned[tensors] = aligned;
    const int64_t chunks = (n + kChunk - 1) / kChunk;
    for (int64_t c = 0; c < chunks; ++c) {
      if (blocks == kMaxBlocks) {
        // The tensor goes on in the next launch: carry its slot over.
        const int slot = tensors;
        void* ptrs[Depth];
        for (int k = 0; k < Depth; ++k) ptrs[k] = tl.ptr[k][slot];
        void* const copy_ptr = tl.copy[slot];
        launch(tl, blocks);
        tl = TensorLists<Depth>{};
        tensors = blocks = 0;
        for (int k = 0; k < Depth; ++k) tl.ptr[k][0] = ptrs[k];
        tl.copy[0] = copy_ptr;
        tl.copy_kind[0] = kind;
        tl.numel[0] = n;
        tl.aligned[0] = aligned;
      }
      tl.block_tensor[blocks] = static_cast<unsigned char>(tensors);
      tl.block_chunk[blocks] = static_cast<int>(c);
      ++blocks;
    }
    ++tensors;
  }
  flush();
}

void sgd_step_foreach(OpCall& call) {
  const Tensor& first = call.in(0);
  const int dev = first.device().index;
  activate(dev);
  const SgdStepAttrs& a = call.attrs<SgdStepAttrs>();
  HEARTH_CUDA_DISPATCH_FLOATING(first.dtype(), "sgd_step", [&] {
    for_each_launch<3>(call, [&](const TensorLists<3>& tl, int blocks) {
      sgd_kernel<scalar_t><<<blocks, kThreads, 0, stream(dev)>>>(tl, a);
      HEARTH_CUDA_CHECK_LAUNCH();
    });
  });
}

void adam_step_foreach(OpCall& call) {
  const Tensor& first = call.in(0);
  const int dev = first.device().index;
  activate(dev);
  const AdamStepAttrs& a = call.attrs<AdamStepAttrs>();
  const double bc1 = 1.0 - std::pow(a.beta1, static_cast<double>(a.step));
  const double bc2 = 1.0 - std::pow(a.beta2, static_cast<double>(a.step));
  HEARTH_CUDA_DISPATCH_FLOATING(first.dtype(), "adam_step", [&] {
    for_each_launch<5>(call, [&](const TensorLists<5>& tl, int blocks) {
      adam_kernel<scalar_t><<<blocks, kThreads, 0, stream(dev)>>>(tl, a, a.lr / bc1, std::sqrt(bc2));
      HEARTH_CUDA_CHECK_LAUNCH();
    });
  });
}

// ---- clip_grad_norm_foreach ------------------------------------------------
// Four steps, none of which reads a value on the host:
// 1. each chunk's sum of |x|^p (the largest |x| for p = infinity) into a
//    partial of its own: chunks are numbered in launch order, so a gradient's
//    chunks are consecutive partials;
// 2. each gradient's norm from its partials, summed in order by one thread;
// 3. one block: the norm of the norms (the total, the op's output) and the
//    coefficient min(1, max_norm / (total + 1e-6));
// 4. every gradient scaled by the coefficient rounded to its dtype.
// Every sum runs in a fixed order, so the result does not change from run to run.

enum PowerKind : int { kPowerGeneral = 0, kPowerOne = 1, kPowerTwo = 2, kPowerInf = 3 };

template <typename A>
__device__ __forceinline__ A power_term(A v, int kind, A p) {
  v = v < A(0) ? -v : v;
  if (kind == kPowerTwo) return v * v;
  if (kind == kPowerOne || kind == kPowerInf) return v;
  return pow(v, p);
}

template <typename A>
__device__ __forceinline__ A power_combine(A a, A b, int kind) {
  return kind == kPowerInf ? (a < b ? b : a) : a + b;
}

template <typename A>
__device__ __forceinline__ A norm_from_power(A s, int kind, A p) {
  if (kind == kPowerTwo) return sqrt(s);
  if (kind == kPowerOne || kind == kPowerInf) return s;
  return pow(s, A(1) / p);
}

template <typename D>
__global__ void chunk_power_sums_kernel(TensorLists<1> tl, acc_t<D>* partials, int kind, acc_t<D> p) {
  using A = acc_t<D>;
  __shared__ A smem[32];
  const int t = tl.block_tensor[blockIdx.x];
  const int64_t begin = static_cast<int64_t>(tl.block_chunk[blockIdx.x]) * kChunk;
  const int64_t end = min(begin + kChunk, tl.numel[t]);
  const D* x = static_cast<const D*>(tl.ptr[0][t]);
  A acc = A(0);
  int64_t scalar_from = begin;
  if (tl.aligned[t]) {
    const int64_t quads = (end - begin) / 4;
    for (int64_t q = threadIdx.x; q < quads; q += blockDim.x) {
      const Quad<D> r = *reinterpret_cast<const Quad<D>*>(x + begin + 4 * q);
#pragma unroll
      for (int l = 0; l < 4; ++l) acc = power_combine(acc, power_term(to_acc(r.v[l]), kind, p), kind);
    }
    scalar_from = begin + 4 * quads;
  }
  for (int64_t i = scalar_from + threadIdx.x; i < end; i += blockDim.x)
    acc = power_combine(acc, power_term(to_acc(x[i]), kind, p), kind);
  A v[1] = {acc};
  if (kind == kPowerInf)
    nn::block_reduce<1>(v, nn::MaxOp{}, smem);
  else
    nn::block_reduce<1>(v, nn::SumOp{}, smem);
  if (threadIdx.x == 0) partials[blockIdx.x] = v[0];
}

inline constexpr int kNormsPerLaunch = 256;
struct PartialRanges {
  int first[kNormsPerLaunch];
  int count[kNormsPerLaunch];
};

template <typename A>
__global__ void tensor_norms_kernel(PartialRanges r, int tensors, const A* partials, A* norms, int kind, A p) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= tensors) return;
  A s = A(0);
  for (int c = 0; c < r.count[i]; ++c) s = power_combine(s, partials[r.first[i] + c], kind);
  norms[i] = norm_from_power(s, kind, p);
}

template <typename A>
__global__ void total_norm_kernel(const A* norms, int n, A* total, A* coef, int kind, A p, A max_norm) {
  __shared__ A smem[32];
  A acc = A(0);
  for (int i = threadIdx.x; i < n; i += blockDim.x) acc = power_combine(acc, power_term(norms[i], kind, p), kind);
  A v[1] = {acc};
  if (kind == kPowerInf)
    nn::block_reduce<1>(v, nn::MaxOp{}, smem);
  else
    nn::block_reduce<1>(v, nn::SumOp{}, smem);
  if (threadIdx.x == 0) {
    const A t = norm_from_power(v[0], kind, p);
    *total = t;
    const A c = max_norm / (t + A(1e-6));
    *coef = c < A(1) ? c : A(1);
  }
}

template <typename D>
__global__ void scale_kernel(TensorLists<1> tl, const acc_t<D>* coef) {
  using A = acc_t<D>;
  const A c = to_acc(from_acc<D>(*coef));  // rounded to the gradients' dtype, as mul by cast(coef) rounds it
  constexpr bool kWrites[1] = {true};
  for_chunk<D>(tl, kWrites, [&](D& g) { g = from_acc<D>(to_acc(g) * c); });
}

void clip_grad_norm_foreach(OpCall& call) {
  const Tensor& first = call.in(0);
  const int dev = first.device().index;
  activate(dev);
  const ClipGradNormAttrs& a = call.attrs<ClipGradNormAttrs>();
  const int kind = std::isinf(a.norm_type) ? kPowerInf
                   : a.norm_type == 2.0    ? kPowerTwo
                   : a.norm_type == 1.0    ? kPowerOne
                                           : kPowerGeneral;
  // The chunks of each gradient, in the order the launches number them.
  std::vector<int> first_partial, partial_count;
  int64_t chunks = 0;
  for (const Tensor& g : call.inputs) {
    const int64_t c = (g.numel() + kChunk - 1) / kChunk;
    first_partial.push_back(static_cast<int>(chunks));
    partial_count.push_back(static_cast<int>(c));
    chunks += c;
  }
  const int n = static_cast<int>(call.inputs.size());
  HEARTH_CUDA_DISPATCH_FLOATING(first.dtype(), "clip_grad_norm_foreach", [&] {
    using A = acc_t<scalar_t>;
    const DType acc_dtype = std::is_same_v<A, double> ? DType::float64 : DType::float32;
    // partials, then each gradient's norm, then the coefficient
    Tensor scratch = Tensor::empty({chunks + n + 1}, acc_dtype, first.device());
    A* partials = static_cast<A*>(scratch.data_ptr());
    A* norms = partials + chunks;
    A* coef = norms + n;
    const A p = static_cast<A>(a.norm_type);
    int64_t done = 0;
    for_each_launch<1, false>(call, [&](const TensorLists<1>& tl, int blocks) {
      chunk_power_sums_kernel<scalar_t><<<blocks, kThreads, 0, stream(dev)>>>(tl, partials + done, kind, p);
      HEARTH_CUDA_CHECK_LAUNCH();
      done += blocks;
    });
    for (int base = 0; base < n; base += kNormsPerLaunch) {
      PartialRanges r{};
      const int count = std::min(kNormsPerLaunch, n - base);
      for (int k = 0; k < count; ++k) {
        r.first[k] = first_partial[static_cast<size_t>(base + k)];
        r.count[k] = partial_count[static_cast<size_t>(base + k)];
      }
      tensor_norms_kernel<A><<<(count + 127) / 128, 128, 0, stream(dev)>>>(r, count, partials, norms + base, kind, p);
      HEARTH_CUDA_CHECK_LAUNCH();
    }
    total_norm_kernel<A><<<1, 1024, 0, stream(dev)>>>(norms, n, static_cast<A*>(call.out(0).data_ptr()), coef, kind, p,
                                                      static_cast<A>(a.max_norm));
    HEARTH_CUDA_CHECK_LAUNCH();
    for_each_launch<1, false>(call, [&](const TensorLists<1>& tl, int blocks) {
      scale_kernel<scalar_t><<<blocks, kThreads, 0, stream(dev)>>>(tl, coef);
      HEARTH_CUDA_CHECK_LAUNCH();
    });
  });
}

DeviceKind cuda_kind() { return register_device_kind("cuda"); }
// The single-tensor ops are one group of the foreach layout.
HEARTH_REGISTER_KERNEL(sgd_step, cuda_kind(), sgd_step_foreach, DTypeSet::floating());
HEARTH_REGISTER_KERNEL(adam_step, cuda_kind(), adam_step_foreach, DTypeSet::floating());
HEARTH_REGISTER_KERNEL(sgd_step_foreach, cuda_kind(), sgd_step_foreach, DTypeSet::floating());
HEARTH_REGISTER_KERNEL(adam_step_foreach, cuda_kind(), adam_step_foreach, DTypeSet::floating());
HEARTH_REGISTER_KERNEL(clip_grad_norm_foreach, cuda_kind(), clip_grad_norm_foreach, DTypeSet::floating());

}  // namespace
}  // namespace hearth::cuda
