// Options every backend reads and a program sets: PyTorch's
// torch.set_float32_matmul_precision and torch.backends.cudnn.benchmark, in
// one neutral place. The Trainer (--tf32) and programs set them here; a
// backend reads them at every call (an atomic load), never the environment.
//
// They start from the environment, read once at their first use:
// HEARTH_ALLOW_TF32=0 starts the precision at "highest" (default "high"),
// HEARTH_CUDNN_BENCHMARK=1 starts the convolution benchmark on. A setter
// called before the first use wins over the environment.
//
// A change applies to the next call: backends that keep plans (a GEMM's
// algorithm, a convolution's engine) key them on these options, so a plan made
// under one setting is never used under another.
#pragma once

#include <string>
#include <string_view>

namespace hearth {

// How float32 matrix products and convolutions may compute their products.
enum class Float32MatmulPrecision {
  highest,  // exact float32 products
  high,     // reduced-precision products with a 10-bit mantissa (TF32-class) allowed where a backend has them
  medium,   // also products of bfloat16-rounded operands (bf16-class) where a backend has them
};

// "highest", "high" or "medium"; anything else is a ValueError naming what is allowed.
void set_float32_matmul_precision(std::string_view precision);
void set_float32_matmul_precision(Float32MatmulPrecision precision);
Float32MatmulPrecision float32_matmul_precision();
const char* float32_matmul_precision_name(Float32MatmulPrecision precision);
// Whether float32 products may be computed with reduced precision (high or medium).
bool float32_reduced_precision_allowed();

// Convolution autotuning: time a backend's candidate algorithms at a plan's
// first use and keep the fastest (off: the backend's heuristics' first choice).
void set_convolution_benchmark(bool on);
bool convolution_benchmark();

}  // namespace hearth
