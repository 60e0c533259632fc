// Matrix products as backends see them. Every product is one batched GEMM:
//   bmm   inputs {a [B, M, K], b [B, K, N], bias [N]?, partial [B, M, N]?} outputs {out [B, M, N] contiguous};
//         no attributes.
//         out = a @ b, plus bias added to every row when given (linear's bias,
//         fused into the GEMM's epilogue where the backend can; contiguous),
//         plus partial when given (a sum of gradients the product joins: the
//         autograd engine's, in the GEMM's epilogue, beta = 1; contiguous, in
//         out's dtype, usually out itself, the sum written in place; a kernel
//         must also accept a distinct tensor).
//         a, b and out share one floating dtype. The batch stride of a and b is
//         arbitrary (0 when the functional layer broadcasts one operand over the
//         batch). Each matrix is laid out for BLAS: either its column stride is 1
//         and its row stride is at least max(1, columns) (row-major, e.g. a
//         contiguous matrix), or its row stride is 1 and its column stride is at
//         least max(1, rows) (column-major, e.g. a transposed view). B, M, N and
//         K are all >= 1: the functional layer handles empty products itself.
#pragma once
