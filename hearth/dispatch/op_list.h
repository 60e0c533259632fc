// Every op hearth dispatches, named once. Everything else is generated from
// this list (hearth/dispatch/op_info.h): the OpId enum that registration sites
// and the functional layer name ops by (a misspelled op does not compile), the
// table the registry defines every op from at start-up, and what `hearth ops`
// prints.
//
// An op belongs to one family, and a family's code sits in one file per layer,
// all named by the family (docs/ARCHITECTURE.md, "Op families"):
//   hearth/dispatch/schemas/<family>.h   operands and attributes as backends see them
//   hearth/ops/<family>.cpp              checks, forward, backward (the functional layer)
//   hearth/backends/cpu/<family>.cpp     the CPU kernels
//   hearth/backends/<kind>/<family>.*    another backend's kernels, where the family has any
//   tests/unit/ops/test_<family>.cpp     tests/parity/parity_<family>.cpp (every kind against the CPU)
// (tests/unit/dispatch/test_op_list.cpp checks that these files exist.)
//
// Columns of X(name, family, schema, mutates, stride, view, backward, role):
//   name      the op; OpId::name, and the name find_op(), errors and `hearth ops` use
//   family    its family (HEARTH_OP_FAMILIES below)
//   schema    the attributes struct its kernels read (in schemas/<family>.h), or NoAttrs
//   mutates   (i, j, ...): inputs the kernels write in place besides the outputs
//             (the CPU fallback copies them back); () for none
//   stride    > 0 for ops over a list of equal groups of inputs (the optimizers'
//             foreach steps): `mutates` then names positions in the first group,
//             repeated every `stride` inputs; 0 otherwise
//   view      whether the op's outputs alias its inputs (views never fall back)
//   backward  (op, ...): the ops its backward formula dispatches, when they are
//             ops of their own; () when the gradient is composed of other ops
//             (or there is none)
//   role      primitive: a backend that trains models implements it;
//             fusion: several primitives in one kernel, for speed. Every fusion
//             has a composition of primitives (hearth/ops/<family>.cpp,
//             registered with HEARTH_REGISTER_COMPOSITION) that dispatch runs on
//             the call's own device when that device has no kernel for it, so
//             a backend of primitives alone trains every model.
// Fused variants are ops of their own (conv2d_relu, batch_norm_add_relu, ...),
// so their kernels show in `hearth ops` and can be missing from a backend.
#pragma once

// The families, in the order `hearth ops` and the docs list them.
#define HEARTH_OP_FAMILIES(F) \
  F(unary)                    \
  F(activation)               \
  F(binary)                   \
  F(maximum)                  \
  F(compare)                  \
  F(pow)                      \
  F(where)                    \
  F(clamp)                    \
  F(reduce_sum)               \
  F(reduce_minmax)            \
  F(reduce_norm)              \
  F(reduce_var)               \
  F(scan)                     \
  F(sort)                     \
  F(range)                    \
  F(random)                   \
  F(copy)                     \
  F(index)                    \
  F(matmul)                   \
  F(conv2d)                   \
  F(pooling)                  \
  F(batch_norm)               \
  F(layer_norm)               \
  F(softmax)                  \
  F(attention_softmax)        \
  F(fused_attention)          \
  F(dropout)                  \
  F(dropout_add_layer_norm)   \
  F(embedding)                \
  F(loss)                     \
  F(optim)

// clang-format off
#define HEARTH_OP_LIST(X)                                                                                                                      \
  /* unary: elementwise functions of one tensor */                                                                                             \
  X(neg,                          unary,             NoAttrs,               (),           0, false, (), primitive)                             \
  X(abs,                          unary,             NoAttrs,               (),           0, false, (), primitive)                             \
  X(exp,                          unary,             NoAttrs,               (),           0, false, (), primitive)                             \
  X(log,                          unary,             NoAttrs,               (),           0, false, (), primitive)                             \
  X(sqrt,                         unary,             NoAttrs,               (),           0, false, (), primitive)                             \
  X(rsqrt,                        unary,             NoAttrs,               (),           0, false, (), primitive)                             \
  X(sign,                         unary,             NoAttrs,               (),           0, false, (), primitive)                             \
  X(square,                       unary,             NoAttrs,               (),           0, false, (), primitive)                             \
  X(isnan,                        unary,             NoAttrs,               (),           0, false, (), primitive)                             \
  X(isfinite,                     unary,             NoAttrs,               (),           0, false, (), primitive)                             \
  X(logical_not,                  unary,             NoAttrs,               (),           0, false, (), primitive)                             \
  /* activation: the nonlinearities of networks, with their dedicated backwards */                                                             \
  X(relu,                         activation,        NoAttrs,               (),           0, false, (relu_backward), primitive)                \
  X(relu_backward,                activation,        NoAttrs,               (),           0, false, (), primitive)                             \
  X(sigmoid,                      activation,        NoAttrs,               (),           0, false, (), primitive)                             \
  X(tanh,                         activation,        NoAttrs,               (),           0, false, (), primitive)                             \
  X(silu,                         activation,        NoAttrs,               (),           0, false, (), primitive)                             \
  X(gelu,                         activation,        GeluAttrs,             (),           0, false, (gelu_backward), primitive)                \
  X(gelu_backward,                activation,        GeluAttrs,             (),           0, false, (), primitive)                             \
  /* binary: arithmetic of two broadcast tensors */                                                                                            \
  X(add,                          binary,            AlphaAttrs,            (),           0, false, (), primitive)                             \
  X(sub,                          binary,            AlphaAttrs,            (),           0, false, (), primitive)                             \
  X(mul,                          binary,            NoAttrs,               (),           0, false, (), primitive)                             \
  X(div,                          binary,            NoAttrs,               (),           0, false, (), primitive)                             \
  /* maximum: elementwise maximum and minimum, NaN-propagating */                                                                              \
  X(maximum,                      maximum,           NoAttrs,               (),           0, false, (), primitive)                             \
  X(minimum,                      maximum,           NoAttrs,               (),           0, false, (), primitive)                             \
  /* compare: comparisons and logical connectives, bool results */                                                                             \
  X(eq,                           compare,           NoAttrs,               (),           0, false, (), primitive)                             \
  X(ne,                           compare,           NoAttrs,               (),           0, false, (), primitive)                             \
  X(lt,                           compare,           NoAttrs,               (),           0, false, (), primitive)                             \
  X(le,                           compare,           NoAttrs,               (),           0, false, (), primitive)                             \
  X(gt,                           compare,           NoAttrs,               (),           0, false, (), primitive)                             \
  X(ge,                           compare,           NoAttrs,               (),           0, false, (), primitive)                             \
  X(logical_and,                  compare,           NoAttrs,               (),           0, false, (), primitive)                             \
  X(logical_or,                   compare,           NoAttrs,               (),           0, false, (), primitive)                             \
  X(logical_xor,                  compare,           NoAttrs,               (),           0, false, (), primitive)                             \
  /* pow, where, clamp */                                                                                                                      \
  X(pow,                          pow,               NoAttrs,               (),           0, false, (), primitive)                             \
  X(where,                        where,             NoAttrs,               (),           0, false, (), primitive)                             \
  X(clamp,                        clamp,             ClampAttrs,            (),           0, false, (), primitive)                             \
  /* reductions over rows */                                                                                                                   \
  X(sum,                          reduce_sum,        NoAttrs,               (),           0, false, (), primitive)                             \
  X(amax,                         reduce_minmax,     NoAttrs,               (),           0, false, (), primitive)                             \
  X(amin,                         reduce_minmax,     NoAttrs,               (),           0, false, (), primitive)                             \
  X(max_dim,                      reduce_minmax,     NoAttrs,               (),           0, false, (), primitive)                             \
  X(min_dim,                      reduce_minmax,     NoAttrs,               (),           0, false, (), primitive)                             \
  X(norm,                         reduce_norm,       NormAttrs,             (),           0, false, (), primitive)                             \
  X(var,                          reduce_var,        VarAttrs,              (),           0, false, (), primitive)                             \
  /* scan, sort */                                                                                                                             \
  X(cumsum,                       scan,              ScanAttrs,             (),           0, false, (), primitive)                             \
  X(sort,                         sort,              SortAttrs,             (),           0, false, (), primitive)                             \
  X(topk,                         sort,              TopkAttrs,             (),           0, false, (), primitive)                             \
  /* range, random, copy: ops that fill or write a tensor */                                                                                   \
  X(arange_,                      range,             RangeAttrs,            (),           0, false, (), primitive)                             \
  X(linspace_,                    range,             LinspaceAttrs,         (),           0, false, (), primitive)                             \
  X(uniform_,                     random,            RandomAttrs,           (),           0, false, (), primitive)                             \
  X(normal_,                      random,            RandomAttrs,           (),           0, false, (), primitive)                             \
  X(randint_,                     random,            RandomAttrs,           (),           0, false, (), primitive)                             \
  X(copy_,                        copy,              NoAttrs,               (),           0, false, (), primitive)                             \
  X(fill_,                        copy,              FillAttrs,             (),           0, false, (), primitive)                             \
  /* index: gathering and scattering by int64 indices */                                                                                       \
  X(index_select,                 index,             IndexDimAttrs,         (),           0, false, (), primitive)                             \
  X(gather,                       index,             IndexDimAttrs,         (),           0, false, (), primitive)                             \
  X(scatter_add,                  index,             IndexDimAttrs,         (),           0, false, (), primitive)                             \
  /* matmul: every product is one batched GEMM */                                                                                              \
  X(bmm,                          matmul,            NoAttrs,               (),           0, false, (), primitive)                             \
  /* conv2d; _relu: max(conv + bias, 0) in the same pass; _add_relu: max(conv + bias + residual, 0) */                                         \
  X(conv2d,                       conv2d,            Conv2dAttrs,           (),           0, false,                                            \
    (conv2d_backward_input, conv2d_backward_weight, conv2d_backward_bias), primitive)                                                          \
  X(conv2d_relu,                  conv2d,            Conv2dAttrs,           (),           0, false,                                            \
    (conv2d_backward_input, conv2d_backward_weight, conv2d_backward_bias), fusion)                                                             \
  X(conv2d_add_relu,              conv2d,            Conv2dAttrs,           (),           0, false,                                            \
    (conv2d_backward_input, conv2d_backward_weight, conv2d_backward_bias), fusion)                                                             \
  X(conv2d_backward_input,        conv2d,            Conv2dAttrs,           (),           0, false, (), primitive)                             \
  X(conv2d_backward_weight,       conv2d,            Conv2dAttrs,           (),           0, false, (), primitive)                             \
  X(conv2d_backward_bias,         conv2d,            NoAttrs,               (),           0, false, (), primitive)                             \
  /* pooling */                                                                                                                                \
  X(max_pool2d,                   pooling,           Pool2dAttrs,           (),           0, false, (max_pool2d_backward), primitive)          \
  X(max_pool2d_backward,          pooling,           Pool2dAttrs,           (),           0, false, (), primitive)                             \
  X(avg_pool2d,                   pooling,           Pool2dAttrs,           (),           0, false, (avg_pool2d_backward), primitive)          \
  X(avg_pool2d_backward,          pooling,           Pool2dAttrs,           (),           0, false, (), primitive)                             \
  X(adaptive_avg_pool2d,          pooling,           NoAttrs,               (),           0, false, (adaptive_avg_pool2d_backward), primitive) \
  X(adaptive_avg_pool2d_backward, pooling,           NoAttrs,               (),           0, false, (), primitive)                             \
  /* batch_norm; _relu: max(y, 0); _add_relu: max(y + residual, 0), the residual a sixth input */                                              \
  X(batch_norm,                   batch_norm,        BatchNormAttrs,        (1, 2, 6),    0, false, (batch_norm_backward), primitive)          \
  X(batch_norm_relu,              batch_norm,        BatchNormAttrs,        (1, 2, 6),    0, false, (batch_norm_backward), fusion)             \
  X(batch_norm_add_relu,          batch_norm,        BatchNormAttrs,        (1, 2, 6),    0, false, (batch_norm_backward), fusion)             \
  X(batch_norm_backward,          batch_norm,        BatchNormAttrs,        (),           0, false, (), primitive)                             \
  /* layer_norm */                                                                                                                             \
  X(layer_norm,                   layer_norm,        LayerNormAttrs,        (),           0, false, (layer_norm_backward), primitive)          \
  X(layer_norm_backward,          layer_norm,        NoAttrs,               (),           0, false, (), primitive)                             \
  /* softmax */                                                                                                                                \
  X(softmax,                      softmax,           NoAttrs,               (),           0, false, (softmax_backward), primitive)             \
  X(log_softmax,                  softmax,           NoAttrs,               (),           0, false, (log_softmax_backward), primitive)         \
  X(softmax_backward,             softmax,           NoAttrs,               (),           0, false, (), primitive)                             \
  X(log_softmax_backward,         softmax,           NoAttrs,               (),           0, false, (), primitive)                             \
  /* attention_softmax: attention's scale, mask, softmax and dropout in one pass */                                                            \
  X(attention_softmax,            attention_softmax, AttentionSoftmaxAttrs, (),           0, false, (attention_softmax_backward), fusion)      \
  X(attention_softmax_backward,   attention_softmax, AttentionSoftmaxAttrs, (),           0, false, (), fusion)                                \
  /* fused_attention: the whole of attention, saving the output and each row's log-sum-exp, not the weights */                                 \
  X(fused_attention,              fused_attention,   FusedAttentionAttrs,   (),           0, false, (fused_attention_backward), fusion)        \
  X(fused_attention_backward,     fused_attention,   FusedAttentionAttrs,   (),           0, false, (), fusion)                                \
  /* dropout, embedding */                                                                                                                     \
  X(dropout,                      dropout,           DropoutAttrs,          (),           0, false, (dropout_backward), primitive)             \
  X(dropout_backward,             dropout,           DropoutAttrs,          (),           0, false, (), primitive)                             \
  /* dropout_add_layer_norm: layer_norm(dropout(x) + residual), a transformer block's tail */                                                  \
  X(dropout_add_layer_norm,       dropout_add_layer_norm, DropoutAddLayerNormAttrs, (),       0, false,                                        \
    (dropout_add_layer_norm_backward), fusion)                                                                                                 \
  X(dropout_add_layer_norm_backward, dropout_add_layer_norm, DropoutAddLayerNormAttrs, (),    0, false, (), fusion)                            \
  X(embedding,                    embedding,         NoAttrs,               (),           0, false, (embedding_backward), primitive)           \
  X(embedding_backward,           embedding,         EmbeddingAttrs,        (),           0, false, (), primitive)                             \
  /* loss */                                                                                                                                   \
  X(cross_entropy,                loss,              CrossEntropyAttrs,     (),           0, false, (cross_entropy_backward), primitive)       \
  X(cross_entropy_backward,       loss,              CrossEntropyAttrs,     (),           0, false, (), primitive)                             \
  X(nll_loss,                     loss,              NllLossAttrs,          (),           0, false, (nll_loss_backward), primitive)            \
  X(nll_loss_backward,            loss,              NllLossAttrs,          (),           0, false, (), primitive)                             \
  /* optim: one update of one parameter, or of many (foreach), in place */                                                                     \
  X(sgd_step,                     optim,             SgdStepAttrs,          (0, 2),       0, false, (), primitive)                             \
  X(adam_step,                    optim,             AdamStepAttrs,         (0, 2, 3, 4), 0, false, (), primitive)                             \
  X(sgd_step_foreach,             optim,             SgdStepAttrs,          (0, 2),       3, false, (), fusion)                                \
  X(adam_step_foreach,            optim,             AdamStepAttrs,         (0, 2, 3, 4), 5, false, (), fusion)                                \
  X(clip_grad_norm_foreach,       optim,             ClipGradNormAttrs,     (0),          1, false, (), fusion)
// clang-format on
