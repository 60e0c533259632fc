// Embedding lookup as backends see it.
// The functional layer (hearth/ops) reshapes and makes inputs contiguous, so every
// kernel below works on dense row-major buffers of the shapes given here. An
// undefined tensor marks an absent optional input, or an output not wanted.
//
//   embedding             inputs {weight [V, D], indices [K] int64|int32} outputs {out [K, D]}
//                         (dispatch key: weight's dtype, any). Indices outside [0, V)
//                         raise ValueError naming the index and V (device kernels
//                         write NaN rows, zero for integer tables, and drop their
//                         gradient instead).
//   embedding_backward    inputs {grad_out [K, D], indices [K]} outputs {grad_weight [V, D]}  EmbeddingAttrs
//                         grad_weight[v] = sum of grad_out rows whose index is v; the
//                         padding_idx row stays zero. The kernel writes every element.
#pragma once

#include <cstdint>

namespace hearth {

struct EmbeddingAttrs {
  int64_t padding_idx = -1;  // -1: none
};

}  // namespace hearth
