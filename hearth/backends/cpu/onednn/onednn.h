// The CPU backend's oneDNN paths, as the family kernels call them. Built from
// backends/cpu/onednn/ where CMake finds oneDNN, else from
// backends/cpu/no_onednn/, whose functions take nothing.
//
// Each function either computes the call entirely and returns true, or
// returns false having touched nothing, and the caller runs the reference
// kernel: for dtypes oneDNN lacks (float64; bfloat16 without AVX512-BF16;
// float16), where the caller forced the reference (cpu_reference.h), or where
// oneDNN declines the geometry.
#pragma once

#include <cstdint>

#include "hearth/dispatch/op_call.h"

namespace hearth::cpu::onednn {

// conv2d, conv2d_relu, conv2d_add_relu (operands: dispatch/schemas/conv2d.h).
bool conv2d_forward(OpCall& call);
bool conv2d_backward_input(OpCall& call);
bool conv2d_backward_weight(OpCall& call);

// Row-major float32 C[m, n] = alpha * op(A) op(B) + beta * C (cpu/gemm.h's
// contract), on the calling thread alone unless `threaded` (then over the
// OpenMP threads, except inside a parallel region). False where oneDNN is not
// built, the reference is forced or oneDNN refuses the call (nothing written).
bool sgemm(bool trans_a, bool trans_b, int64_t m, int64_t n, int64_t k, float alpha, const float* a, int64_t lda,
           const float* b, int64_t ldb, float beta, float* c, int64_t ldc, bool threaded);
// How many GEMMs oneDNN has computed (0 where it is not built).
uint64_t sgemm_calls();

// How many calls oneDNN has computed in this process (0 where it is not
// built): lets tests and benchmarks check which path a call took.
uint64_t calls_taken();

// How many times weights were reordered into a primitive's layout, and how
// many calls found them so already (reordered_weights.h); 0 where not built.
uint64_t weight_reorders();
uint64_t weight_reorders_saved();

}  // namespace hearth::cpu::onednn
