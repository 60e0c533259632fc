// Batched GEMM through cuBLASLt (gemm.h), for bmm (matmul.cu). hearth's
// matrices are row-major or column-major views (see
// hearth/dispatch/schemas/matmul.h); cuBLASLt is column-major, so
// C = A B is computed as C^T = B^T A^T with each operand's transpose flag
// chosen from its strides: no copies. Descriptors and the heuristic's algorithm
// are cached per problem, since a training step repeats the same shapes.
#include <cstdint>
#include <mutex>
#include <tuple>
#include <type_traits>
#include <unordered_map>

#include "hearth/backends/cuda/allocator.h"
#include "hearth/backends/cuda/context.h"
#include "hearth/backends/cuda/cuda_check.h"
#include "hearth/backends/cuda/device_types.cuh"
#include "hearth/backends/cuda/gemm.h"
#include "hearth/core/backend_options.h"

namespace hearth::cuda {
namespace {

constexpr size_t kWorkspaceBytes = 32u << 20;

struct Operand {  // one stored matrix as cuBLASLt sees it (column-major)
  uint64_t rows, cols;
  int64_t ld;
  bool trans;
  int64_t batch_stride;
};

// Our row-major [r, c] matrix view `t` (last two dims) needed as the column-major
// [c, r] matrix (its transpose) in the swapped product.
Operand describe(const Tensor& t) {
  const int64_t r = t.shape()[1], c = t.shape()[2];
  const int64_t rs = t.strides()[1], cs = t.strides()[2];
  Operand o;
  o.batch_stride = t.strides()[0];
  if (cs == 1 || c == 1) {  // row-major: stored column-major as [c, r], used as is
    o.rows = c;
    o.cols = r;
    o.ld = std::max<int64_t>(rs, std::max<int64_t>(1, c));
    o.trans = false;
  } else {  // column-major (rs == 1): stored as [r, c], used transposed
    o.rows = r;
    o.cols = c;
    o.ld = std::max<int64_t>(cs, std::max<int64_t>(1, r));
    o.trans = true;
  }
  return o;
}

struct Key {
  int device;
  DType dtype;     // out's (cuBLASLt's C and D)
  DType in_dtype;  // a's and b's: dtype, or bfloat16/float16 for a float32 out
  bool tf32;
  bool bias;   // the bias epilogue (linear): D = A B + bias, broadcast over D's rows
  bool bgrad;  // the BGRADB epilogue (linear's backward): also the sums of B over K
  int64_t batch;
  Operand p, q;
  uint64_t m, n;
  bool operator==(const Key& o) const {
    auto tie = [](const Key& k) {
      return std::make_tuple(k.device, k.dtype, k.in_dtype, k.tf32, k.bias, k.bgrad, k.batch, k.p.rows, k.p.cols, k.p.ld, k.p.trans,
                             k.p.batch_stride, k.q.rows, k.q.cols, k.q.ld, k.q.trans, k.q.batch_stride, k.m, k.n);
    };
    return tie(*this) == tie(o);
  }
};

struct KeyHash {
  size_t operator()(const Key& k) const {
    size_t h = std::hash<int64_t>()(k.batch) ^ (static_cast<size_t>(k.dtype) << 1) ^
               (static_cast<size_t>(k.in_dtype) << 9) ^ (k.tf32 ? 0x9e37 : 0) ^
               (k.bias ? 0x5bd1 : 0) ^ (k.bgrad ? 0x2f6b : 0);
    for (int64_t v : {int64_t(k.p.rows), int64_t(k.p.cols), k.p.ld, int64_t(k.p.trans), k.p.batch_stride,
                      int64_t(k.q.rows), int64_t(k.q.cols), k.q.ld, int64_t(k.q.trans), k.q.batch_stride, int64_t(k.m),
                      int64_t(k.n), int64_t(k.device)})
      h = h * 1000003u ^ std::hash<int64_t>()(v);
    return h;
  }
};

struct Plan {
  cublasLtMatmulDesc_t op = nullptr;
  cublasLtMatrixLayout_t lp = nullptr, lq = nullptr, ld = nullptr;
  cublasLtMatmulAlgo_t algo{};
  bool has_algo = false;
  bool fused_bias = false;   // cuBLASLt adds the bias; else a kernel adds it afterwards
  bool fused_bgrad = false;  // cuBLASLt sums B over K; else a kernel sums it afterwards
};

cudaDataType_t data_type(DType t) {
  switch (t) {
    case DType::float32:
      return CUDA_R_32F;
    case DType::float64:
      return CUDA_R_64F;
    case DType::bfloat16:
      return CUDA_R_16BF;
    case DType::float16:
      return CUDA_R_16F;
    default:
      HEARTH_THROW(NotImplementedError, "[bmm] cuBLASLt has no kernel for ", dtype_name(t));
  }
}

cublasLtMatrixLayout_t make_layout(cudaDataType_t dt, uint64_t rows, uint64_t cols, int64_t ld, int64_t batch,
                                   int64_t batch_stride) {
  cublasLtMatrixLayout_t l;
  HEARTH_CUBLAS_CHECK(cublasLtMatrixLayoutCreate(&l, dt, rows, cols, ld));
  if (batch > 1) {
    int32_t b = static_cast<int32_t>(batch);
    HEARTH_CUBLAS_CHECK(cublasLtMatrixLayoutSetAttribute(l, CUBLASLT_MATRIX_LAYOUT_BATCH_COUNT, &b, sizeof(b)));
    HEARTH_CUBLAS_CHECK(cublasLtMatrixLayoutSetAttribute(l, CUBLASLT_MATRIX_LAYOUT_STRIDED_BATCH_OFFSET, &batch_stride,
                                                         sizeof(batch_stride)));
  }
  return l;
}

struct State {
  std::mutex mu;
  std::unordered_map<Key, Plan, KeyHash> plans;
};

State& state() {
  static State s;
  return s;
}

DeviceContext& ensure_handles(int device) {
  DeviceContext& ctx = context(device);
  if (!ctx.cublaslt) {
    HEARTH_CUBLAS_CHECK(cublasLtCreate(&ctx.cublaslt));
    ctx.workspace = allocate(kWorkspaceBytes, device);
    ctx.workspace_bytes = kWorkspaceBytes;
  }
  return ctx;
}

Plan& plan_for(const Key& k, DeviceContext& ctx) {
  auto& cache = state().plans;
  auto it = cache.find(k);
  if (it != cache.end()) return it->second;
  Plan p;
  // A float32 D from bfloat16/float16 A and B is one of cuBLASLt's
  // combinations for CUBLAS_COMPUTE_32F: the same float accumulation, stored
  // without the rounding to the half type.
  cudaDataType_t dt = data_type(k.dtype), dt_in = data_type(k.in_dtype);
  cublasComputeType_t compute = CUBLAS_COMPUTE_32F;
  cudaDataType_t scale = CUDA_R_32F;
  if (k.dtype == DType::float64) {
    compute = CUBLAS_COMPUTE_64F;
    scale = CUDA_R_64F;
  } else if (k.in_dtype == DType::float32 && k.tf32) {
    compute = CUBLAS_COMPUTE_32F_FAST_TF32;
  }
  HEARTH_CUBLAS_CHECK(cublasLtMatmulDescCreate(&p.op, compute, scale));
  cublasOperation_t tp = k.p.trans ? CUBLAS_OP_T : CUBLAS_OP_N, tq = k.q.trans ? CUBLAS_OP_T : CUBLAS_OP_N;
  HEARTH_CUBLAS_CHECK(cublasLtMatmulDescSetAttribute(p.op, CUBLASLT_MATMUL_DESC_TRANSA, &tp, sizeof(tp)));
  HEARTH_CUBLAS_CHECK(cublasLtMatmulDescSetAttribute(p.op, CUBLASLT_MATMUL_DESC_TRANSB, &tq, sizeof(tq)));
  // The bias epilogue: in the swapped product D = out^T is [n, m] column-major,
  // so a bias over out's columns runs along D's rows, as cuBLASLt's BIAS adds it.
  // Not for float64 (cuBLASLt's epilogues cover the tensor-core types).
  if (k.bias && k.dtype != DType::float64) {
    const cublasLtEpilogue_t epi = CUBLASLT_EPILOGUE_BIAS;
    HEARTH_CUBLAS_CHECK(cublasLtMatmulDescSetAttribute(p.op, CUBLASLT_MATMUL_DESC_EPILOGUE, &epi, sizeof(epi)));
    p.fused_bias = true;
  }
  // The bias-gradient epilogue: the weight gradient g^T x of linear is, swapped,
  // D = x^T g (cuBLASLt's A = our b = x, its B = our a = g^T, K = the rows of
  // g), so the sums of g over its rows are those of cuBLASLt's B over K, one
  // per column of D: BGRADB (BGRADA would sum x). The vector is in D's type
  // (CUBLASLT_MATMUL_DESC_BIAS_DATA_TYPE's default for a bias gradient: Ctype,
  // so float32 beside a float32 weight gradient from half operands),
  // accumulated in the compute type. Not for float64, as the bias above.
  if (k.bgrad && k.dtype != DType::float64) {
    const cublasLtEpilogue_t epi = CUBLASLT_EPILOGUE_BGRADB;
    HEARTH_CUBLAS_CHECK(cublasLtMatmulDescSetAttribute(p.op, CUBLASLT_MATMUL_DESC_EPILOGUE, &epi, sizeof(epi)));
    p.fused_bgrad = true;
  }
  p.lp = make_layout(dt_in, k.p.rows, k.p.cols, k.p.ld, k.batch, k.p.batch_stride);
  p.lq = make_layout(dt_in, k.q.rows, k.q.cols, k.q.ld, k.batch, k.q.batch_stride);
  p.ld = make_layout(dt, k.n, k.m, static_cast<int64_t>(k.n), k.batch, static_cast<int64_t>(k.m * k.n));
  cublasLtMatmulPreference_t pref;
  HEARTH_CUBLAS_CHECK(cublasLtMatmulPreferenceCreate(&pref));
  size_t ws = ctx.workspace_bytes;
  HEARTH_CUBLAS_CHECK(
      cublasLtMatmulPreferenceSetAttribute(pref, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES, &ws, sizeof(ws)));
  cublasLtMatmulHeuristicResult_t result{};
  int found = 0;
  cublasStatus_t st =
      cublasLtMatmulAlgoGetHeuristic(ctx.cublaslt, p.op, p.lp, p.lq, p.ld, p.ld, pref, 1, &result, &found);
  cublasLtMatmulPreferenceDestroy(pref);
  if (st == CUBLAS_STATUS_SUCCESS && found > 0) {
    p.algo = result.algo;
    p.has_algo = true;
  } else if (p.fused_bias || p.fused_bgrad) {
    // No algorithm with the epilogue: the plain product, then the bias or sums
    // kernel (and the plan remembers it, so the heuristic is asked once).
    const cublasLtEpilogue_t none = CUBLASLT_EPILOGUE_DEFAULT;
    HEARTH_CUBLAS_CHECK(cublasLtMatmulDescSetAttribute(p.op, CUBLASLT_MATMUL_DESC_EPILOGUE, &none, sizeof(none)));
    p.fused_bias = p.fused_bgrad = false;
  }
  return cache.emplace(k, p).first->second;
}

}  // namespace

// Read at every call (an atomic load): the plan cache keys on it, so a change
// of the backend options applies to the next product.
bool tf32_allowed() { return float32_reduced_precision_allowed(); }

namespace {

// out[r, j] += bias[j] over out's rows (out dense [rows, n]).
template <typename D>
__global__ void add_bias_rows_kernel(D* out, const D* bias, int64_t total, int64_t n) {
  for (int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < total;
       i += static_cast<int64_t>(gridDim.x) * blockDim.x)
    out[i] = from_acc<D>(to_acc(out[i]) + to_acc(bias[i % n]));
}

void add_bias_rows(const Tensor& out, const Tensor& bias, int64_t n, cudaStream_t s) {
  const int64_t total = out.numel();
  const unsigned blocks = static_cast<unsigned>(std::min<int64_t>((total + 255) / 256, 65535));
  HEARTH_CUDA_DISPATCH_FLOATING(out.dtype(), "bmm bias", [&] {
    add_bias_rows_kernel<scalar_t><<<blocks, 256, 0, s>>>(static_cast<scalar_t*>(out.data_ptr()),
                                                          static_cast<const scalar_t*>(bias.data_ptr()), total, n);
  });
  HEARTH_CUDA_CHECK_LAUNCH();
}

// sums[i] = sum over k of a[0, i, k] (a [1, M, K] strided), one thread per i:
// the bias gradient when cuBLASLt has no epilogue for it (float64, or no
// algorithm). Consecutive threads read consecutive elements of g^T's columns.
// S is D, or float for the float32 sums of a 16-bit a.
template <typename D, typename S>
__global__ void sums_over_k_kernel(const D* a, S* sums, int64_t m, int64_t k, int64_t sm, int64_t sk) {
  for (int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < m;
       i += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    acc_t<D> s = acc_t<D>(0);
    for (int64_t q = 0; q < k; ++q) s += to_acc(a[i * sm + q * sk]);
    if constexpr (std::is_same_v<S, D>)
      sums[i] = from_acc<D>(s);
    else
      sums[i] = static_cast<S>(s);
  }
}

void sums_over_k(const Tensor& a, const Tensor& sums, cudaStream_t s) {
  const int64_t m = a.shape()[1], k = a.shape()[2];
  const unsigned blocks = static_cast<unsigned>(std::min<int64_t>((m + 255) / 256, 65535));
  const bool to_float = sums.dtype() == DType::float32 && a.dtype() != DType::float32;
  HEARTH_CUDA_DISPATCH_FLOATING(a.dtype(), "bmm sums", [&] {
    const auto* pa = static_cast<const scalar_t*>(a.data_ptr());
    if (to_float)
      sums_over_k_kernel<scalar_t, float><<<blocks, 256, 0, s>>>(pa, static_cast<float*>(sums.data_ptr()), m, k,
                                                                 a.strides()[1], a.strides()[2]);
    else
      sums_over_k_kernel<scalar_t, scalar_t><<<blocks, 256, 0, s>>>(pa, static_cast<scalar_t*>(sums.data_ptr()), m,
                                                                    k, a.strides()[1], a.strides()[2]);
  });
  HEARTH_CUDA_CHECK_LAUNCH();
}

Key key_of(const Tensor& a, const Tensor& b, const Tensor& out, bool bias, bool bgrad) {
  return Key{out.device().index,
             out.dtype(),
             a.dtype(),
             tf32_allowed(),
             bias,
             bgrad,
             out.shape()[0],
             describe(b),
             describe(a),
             static_cast<uint64_t>(out.shape()[1]),
             static_cast<uint64_t>(out.shape()[2])};
}

}  // namespace

bool gemm_fuses_a_sums(const Tensor& a, const Tensor& b, const Tensor& out, const Tensor& a_sums) {
  // The plans assume the alignment a null pointer implies (the heuristic ran
  // without one); a fresh a_sums has it, a view at an odd offset might not.
  if (out.shape()[0] != 1 || out.numel() == 0 || a.shape()[2] == 0 ||
      reinterpret_cast<uintptr_t>(a_sums.data_ptr()) % 16 != 0)
    return false;
  DeviceContext& ctx = ensure_handles(out.device().index);
  std::lock_guard<std::mutex> lock(state().mu);
  return plan_for(key_of(a, b, out, false, true), ctx).fused_bgrad;
}

void gemm_batched(const Tensor& a, const Tensor& b, const Tensor& out, const Tensor& bias, const Tensor& partial,
                  const Tensor& a_sums) {
  const int device = out.device().index;
  DeviceContext& ctx = ensure_handles(device);
  const int64_t n = out.shape()[2];
  if (out.numel() == 0) return;
  if (a.shape()[2] == 0) {  // empty inner dimension: the product is zeros (plus the bias and partial)
    if (!partial.defined())
      HEARTH_CUDA_CHECK(cudaMemsetAsync(out.data_ptr(), 0, out.nbytes(), ctx.stream));
    else if (partial.data_ptr() != out.data_ptr())
      HEARTH_CUDA_CHECK(
          cudaMemcpyAsync(out.data_ptr(), partial.data_ptr(), out.nbytes(), cudaMemcpyDeviceToDevice, ctx.stream));
    if (bias.defined()) add_bias_rows(out, bias, n, ctx.stream);
    if (a_sums.defined()) HEARTH_CUDA_CHECK(cudaMemsetAsync(a_sums.data_ptr(), 0, a_sums.nbytes(), ctx.stream));
    return;
  }
  std::lock_guard<std::mutex> lock(state().mu);
  Plan& p = plan_for(key_of(a, b, out, bias.defined(), a_sums.defined()), ctx);
  if (p.fused_bias || p.fused_bgrad) {
    // One pointer attribute for both: the bias read, or the bias gradient written.
    const void* ptr = p.fused_bias ? bias.data_ptr() : a_sums.data_ptr();
    HEARTH_CUBLAS_CHECK(cublasLtMatmulDescSetAttribute(p.op, CUBLASLT_MATMUL_DESC_BIAS_POINTER, &ptr, sizeof(ptr)));
  }
  // alpha and beta in the scale type (float, double for float64). With a
  // partial sum, C is the partial and beta 1: D = A B + C in the epilogue, C
  // read once, in place when it is D itself (the same layout either way).
  const float one_f = 1.f, zero_f = 0.f;
  const double one_d = 1.0, zero_d = 0.0;
  const bool f64 = out.dtype() == DType::float64;
  const void* alpha = f64 ? static_cast<const void*>(&one_d) : &one_f;
  const void* beta = partial.defined() ? alpha : f64 ? static_cast<const void*>(&zero_d) : &zero_f;
  const void* c = partial.defined() ? partial.data_ptr() : out.data_ptr();
  HEARTH_CUBLAS_CHECK(cublasLtMatmul(ctx.cublaslt, p.op, alpha, b.data_ptr(), p.lp, a.data_ptr(), p.lq, beta, c, p.ld,
                                     out.data_ptr(), p.ld, p.has_algo ? &p.algo : nullptr, ctx.workspace,
                                     ctx.workspace_bytes, ctx.stream));
  if (bias.defined() && !p.fused_bias) add_bias_rows(out, bias, n, ctx.stream);
  if (a_sums.defined() && !p.fused_bgrad) sums_over_k(a, a_sums, ctx.stream);
}

}  // namespace hearth::cuda
