// Matrix products as backends see them. Every product is one batched GEMM:
//   bmm   inputs {a [B, M, K], b [B, K, N], bias [N]?, partial [B, M, N]?}
//         outputs {out [B, M, N] contiguous, a_sums [M]?}; no attributes.
//         out = a @ b, plus bias added to every row when given (linear's bias,
//         fused into the GEMM's epilogue where the backend can; contiguous),
//         plus partial when given (a sum of gradients the product joins: the
//         autograd engine's, in the GEMM's epilogue, beta = 1; contiguous, in
//         out's dtype, usually out itself, the sum written in place; a kernel
//         must also accept a distinct tensor).
//         a_sums, when given (B = 1, neither bias nor partial): a_sums[i] =
//         sum over k of a[0, i, k], contiguous, in out's dtype, accumulated
//         as the product is and rounded once. It is linear's bias gradient
//         beside its weight gradient (a = g^T, the sum over the rows of g
//         running along the product's K), in the GEMM's epilogue where the
//         backend can; a kernel may register a check that says which calls
//         it takes with a_sums (those it has a fused epilogue for), and
//         the functional layer asks it first. A kernel must still compute
//         a_sums for any call it is given.
//         a and b share one floating dtype, and out has it too, except
//         that out may be float32 for bfloat16/float16 a and b (linear's
//         weight gradient written into a float32 .grad under autocast): the
//         product is then accumulated in float32 as always and stored without
//         the rounding to the half type; bias, partial and a_sums follow
//         out's dtype (all three float32 then).
//         The batch stride of a and b is
//         arbitrary (0 when the functional layer broadcasts one operand over the
//         batch). Each matrix is laid out for BLAS: either its column stride is 1
//         and its row stride is at least max(1, columns) (row-major, e.g. a
//         contiguous matrix), or its row stride is 1 and its column stride is at
//         least max(1, rows) (column-major, e.g. a transposed view). B, M, N and
//         K are all >= 1: the functional layer handles empty products itself.
#pragma once
