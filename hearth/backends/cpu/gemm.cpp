#include "hearth/backends/cpu/gemm.h"

#include <cblas.h>

#include <algorithm>

#include "hearth/backends/cpu/onednn/onednn.h"
#include "hearth/backends/cpu/parallel.h"

namespace hearth::cpu {
namespace {

// See gemm.h: hearth does the threading.
[[maybe_unused]] const bool kBlasSingleThreaded = [] {
  openblas_set_num_threads(1);
  return true;
}();

// Below this many flops a GEMM stays on one thread (waking the team costs more).
constexpr double kParallelFlops = 4e6;

CBLAS_TRANSPOSE blas_trans(bool t) { return t ? CblasTrans : CblasNoTrans; }
blasint blas_int(int64_t v) { return static_cast<blasint>(v); }

// OpenBLAS rejects leading dimensions below the row length even when the
// matrix has a single row (where the value is never used).
int64_t fix_ld(int64_t ld, bool trans, int64_t rows, int64_t cols) {
  return std::max<int64_t>({ld, trans ? rows : cols, 1});
}

void blas(bool ta, bool tb, int64_t m, int64_t n, int64_t k, float alpha, const float* a, int64_t lda, const float* b,
          int64_t ldb, float beta, float* c, int64_t ldc) {
  cblas_sgemm(CblasRowMajor, blas_trans(ta), blas_trans(tb), blas_int(m), blas_int(n), blas_int(k), alpha, a,
              blas_int(fix_ld(lda, ta, m, k)), b, blas_int(fix_ld(ldb, tb, k, n)), beta, c,
              blas_int(std::max<int64_t>(ldc, std::max<int64_t>(n, 1))));
}

void blas(bool ta, bool tb, int64_t m, int64_t n, int64_t k, double alpha, const double* a, int64_t lda,
          const double* b, int64_t ldb, double beta, double* c, int64_t ldc) {
  cblas_dgemm(CblasRowMajor, blas_trans(ta), blas_trans(tb), blas_int(m), blas_int(n), blas_int(k), alpha, a,
              blas_int(fix_ld(lda, ta, m, k)), b, blas_int(fix_ld(ldb, tb, k, n)), beta, c,
              blas_int(std::max<int64_t>(ldc, std::max<int64_t>(n, 1))));
}

// Float32 goes to oneDNN where it is built (onednn/sgemm.cpp says why),
// threaded by oneDNN itself when large, else on the calling thread; the
// reference (HEARTH_CPU_REFERENCE=1, float64, or oneDNN absent) below.
bool onednn_gemm(bool ta, bool tb, int64_t m, int64_t n, int64_t k, float alpha, const float* a, int64_t lda,
                 const float* b, int64_t ldb, float beta, float* c, int64_t ldc) {
  const bool threaded = num_threads() > 1 && 2.0 * m * n * k >= kParallelFlops;
  return onednn::sgemm(ta, tb, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc, threaded);
}
bool onednn_gemm(bool, bool, int64_t, int64_t, int64_t, double, const double*, int64_t, const double*, int64_t, double,
                 double*, int64_t) {
  return false;
}

template <typename T>
void threaded_gemm(bool ta, bool tb, int64_t m, int64_t n, int64_t k, T alpha, const T* a, int64_t lda, const T* b,
                   int64_t ldb, T beta, T* c, int64_t ldc) {
  const int threads = num_threads();
  if (m == 0 || n == 0) return;
  if (onednn_gemm(ta, tb, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc)) return;
  if (threads <= 1 || in_parallel_region() || 2.0 * m * n * k < kParallelFlops) {
    blas(ta, tb, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc);
    return;
  }
  // Split the longer side of C; blocks are multiples of 16 so each thread's
  // slice stays aligned with the micro-kernels' tiles.
  const bool by_cols = n >= m;
  const int64_t len = by_cols ? n : m;
  const int64_t block = std::max<int64_t>(16, (len / threads + 15) / 16 * 16);
  const int64_t blocks = (len + block - 1) / block;
#pragma omp parallel for num_threads(static_cast <int>(blocks)) schedule(static, 1)
  for (int64_t i = 0; i < blocks; ++i) {
    const int64_t s = i * block, e = std::min(len, s + block);
    if (by_cols)
      blas(ta, tb, m, e - s, k, alpha, a, lda, b + (tb ? s * ldb : s), ldb, beta, c + s, ldc);
    else
      blas(ta, tb, e - s, n, k, alpha, a + (ta ? s : s * lda), lda, b, ldb, beta, c + s * ldc, ldc);
  }
}

}  // namespace

void gemm(bool trans_a, bool trans_b, int64_t m, int64_t n, int64_t k, float alpha, const float* a, int64_t lda,
          const float* b, int64_t ldb, float beta, float* c, int64_t ldc) {
  threaded_gemm(trans_a, trans_b, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc);
}

void gemm(bool trans_a, bool trans_b, int64_t m, int64_t n, int64_t k, double alpha, const double* a, int64_t lda,
          const double* b, int64_t ldb, double beta, double* c, int64_t ldc) {
  threaded_gemm(trans_a, trans_b, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc);
}

bool prefer_batch_parallel(int64_t n, double flops_each) {
  const int threads = num_threads();
  if (threads <= 1 || n <= 1 || in_parallel_region()) return false;
  // Below this much work, waking a thread team costs more than it saves.
  if (static_cast<double>(n) * flops_each < 1e6) return false;
  // Small products split badly; spreading whole ones always wins.
  if (flops_each < kParallelFlops) return true;
  // Large ones only when the threads get nearly equal shares.
  return n % threads == 0 || n >= 4 * threads;
}

}  // namespace hearth::cpu
