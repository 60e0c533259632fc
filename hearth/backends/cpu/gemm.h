// The one door to OpenBLAS for every CPU kernel (matmul, convolution, linear),
// so threading policy and the half-type detour through float live in one place.
#pragma once

#include <cstdint>

namespace hearth::cpu {

// Row-major C[m, n] = alpha * op(A) op(B) + beta * C, op(X) = X^T when trans_x.
// A is [m, k] (or [k, m] when trans_a) with leading dimension lda; likewise B.
// Runs on however many threads OpenBLAS currently uses (see BlasSingleThread).
void gemm(bool trans_a, bool trans_b, int64_t m, int64_t n, int64_t k, float alpha, const float* a, int64_t lda,
          const float* b, int64_t ldb, float beta, float* c, int64_t ldc);
void gemm(bool trans_a, bool trans_b, int64_t m, int64_t n, int64_t k, double alpha, const double* a, int64_t lda,
          const double* b, int64_t ldb, double beta, double* c, int64_t ldc);

// While alive, OpenBLAS runs every call on the calling thread. Create it on the
// thread that opens an OpenMP region whose iterations call gemm: OpenBLAS's own
// pool would otherwise be shared by (and oversubscribe) the OpenMP threads.
class BlasSingleThread {
 public:
  BlasSingleThread();
  ~BlasSingleThread();
  BlasSingleThread(const BlasSingleThread&) = delete;
  BlasSingleThread& operator=(const BlasSingleThread&) = delete;

 private:
  int saved_;
};

// Whether `n` independent GEMMs of `flops` each are better run one per OpenMP
// thread (single-threaded OpenBLAS) than one after another on OpenBLAS's pool.
bool prefer_batch_parallel(int64_t n, double flops_each);

}  // namespace hearth::cpu
