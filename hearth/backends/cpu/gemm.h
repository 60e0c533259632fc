// The one door to the GEMM libraries for every CPU kernel (matmul,
// convolution, linear), so the threading policy lives in one place. Float32
// goes to oneDNN's sgemm where hearth is built with oneDNN (it picks its
// kernels by the CPU's instruction sets; onednn/sgemm.cpp), float64 and the
// reference (HEARTH_CPU_REFERENCE=1) to OpenBLAS.
//
// Threading: hearth keeps OpenBLAS single-threaded and threads GEMMs itself
// with OpenMP, the pool every other CPU kernel uses. Two pools on the same
// cores oversubscribe them, and OpenBLAS's idle workers keep spinning long
// after each call, stealing the cores from the OpenMP loops that follow.
#pragma once

#include <cstdint>

namespace hearth::cpu {

// Row-major C[m, n] = alpha * op(A) op(B) + beta * C, op(X) = X^T when trans_x.
// A is [m, k] (or [k, m] when trans_a) with leading dimension lda; likewise B.
// Large products are split into column (or row) blocks over the OpenMP threads;
// inside a parallel region the call runs on the calling thread alone.
void gemm(bool trans_a, bool trans_b, int64_t m, int64_t n, int64_t k, float alpha, const float* a, int64_t lda,
          const float* b, int64_t ldb, float beta, float* c, int64_t ldc);
void gemm(bool trans_a, bool trans_b, int64_t m, int64_t n, int64_t k, double alpha, const double* a, int64_t lda,
          const double* b, int64_t ldb, double beta, double* c, int64_t ldc);

// Whether `n` independent GEMMs of `flops` each are better run whole, one per
// OpenMP thread, than one after another with each split over the threads.
bool prefer_batch_parallel(int64_t n, double flops_each);

}  // namespace hearth::cpu
