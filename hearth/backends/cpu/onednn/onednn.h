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

// How many calls oneDNN has computed in this process (0 where it is not
// built): lets tests and benchmarks check which path a call took.
uint64_t calls_taken();

// How many times weights were reordered into a primitive's layout, and how
// many calls found them so already (reordered_weights.h); 0 where not built.
uint64_t weight_reorders();
uint64_t weight_reorders_saved();

}  // namespace hearth::cpu::onednn
