#include "hearth/backends/cpu/gemm.h"

#include <cblas.h>

#include <algorithm>

#include "hearth/backends/cpu/parallel.h"

namespace hearth::cpu {
namespace {

CBLAS_TRANSPOSE blas_trans(bool t) { return t ? CblasTrans : CblasNoTrans; }
blasint blas_int(int64_t v) { return static_cast<blasint>(v); }

// OpenBLAS rejects leading dimensions below the row length even when the
// matrix has a single row (where the value is never used).
int64_t fix_ld(int64_t ld, bool trans, int64_t rows, int64_t cols) {
  return std::max<int64_t>({ld, trans ? rows : cols, 1});
}

}  // namespace

void gemm(bool trans_a, bool trans_b, int64_t m, int64_t n, int64_t k, float alpha, const float* a, int64_t lda,
          const float* b, int64_t ldb, float beta, float* c, int64_t ldc) {
  if (m == 0 || n == 0) return;
  cblas_sgemm(CblasRowMajor, blas_trans(trans_a), blas_trans(trans_b), blas_int(m), blas_int(n), blas_int(k), alpha,
              a, blas_int(fix_ld(lda, trans_a, m, k)), b, blas_int(fix_ld(ldb, trans_b, k, n)), beta, c,
              blas_int(std::max<int64_t>(ldc, std::max<int64_t>(n, 1))));
}

void gemm(bool trans_a, bool trans_b, int64_t m, int64_t n, int64_t k, double alpha, const double* a, int64_t lda,
          const double* b, int64_t ldb, double beta, double* c, int64_t ldc) {
  if (m == 0 || n == 0) return;
  cblas_dgemm(CblasRowMajor, blas_trans(trans_a), blas_trans(trans_b), blas_int(m), blas_int(n), blas_int(k), alpha,
              a, blas_int(fix_ld(lda, trans_a, m, k)), b, blas_int(fix_ld(ldb, trans_b, k, n)), beta, c,
              blas_int(std::max<int64_t>(ldc, std::max<int64_t>(n, 1))));
}

BlasSingleThread::BlasSingleThread() : saved_(openblas_get_num_threads()) {
  if (saved_ != 1) openblas_set_num_threads(1);
}

BlasSingleThread::~BlasSingleThread() {
  if (saved_ != 1) openblas_set_num_threads(saved_);
}

bool prefer_batch_parallel(int64_t n, double flops_each) {
  const int threads = num_threads();
  if (threads <= 1 || n <= 1 || in_parallel_region()) return false;
  // Below this much work, waking a thread team costs more than it saves.
  if (static_cast<double>(n) * flops_each < 1e6) return false;
  // Small products barely speed up inside OpenBLAS; spreading them always wins.
  if (flops_each < 4e6) return true;
  // Large ones only when the threads get nearly equal shares.
  return n % threads == 0 || n >= 4 * threads;
}

}  // namespace hearth::cpu
