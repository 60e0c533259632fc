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
//   hearth/backends/cuda/<family>.cu     the CUDA kernels, where the family has any
//   tests/unit/ops/test_<family>.cpp     tests/gpu/parity_<family>.cpp
// (tests/unit/dispatch/test_op_list.cpp checks that these files exist.)
//
// Columns of X(name, family, schema, mutates, stride, view, backward):
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
#define HEARTH_OP_LIST(X)                                                                                          \
  /* unary: elementwise functions of one tensor */                                                               \
  X(neg,                          unary,             NoAttrs,               (),           0, false, ())           \
  X(abs,                          unary,             NoAttrs,               (),           0, false, ())           \
  X(exp,                          unary,             NoAttrs,               (),           0, false, ())           \
  X(log,                          unary,             NoAttrs,               (),           0, false, ())           \
  X(sqrt,                         unary,             NoAttrs,               (),           0, false, ())           \
  X(rsqrt,                        unary,             NoAttrs,               (),           0, false, ())           \
  X(sign,                         unary,             NoAttrs,               (),           0, false, ())           \
  X(square,                       unary,             NoAttrs,               (),           0, false, ())           \
  X(isnan,                        unary,             NoAttrs,               (),           0, false, ())           \
  X(isfinite,                     unary,             NoAttrs,               (),           0, false, ())           \
  X(logical_not,                  unary,             NoAttrs,               (),           0, false, ())           \
  /* activation: the nonlinearities of networks, with their dedicated backwards */                               \
  X(relu,                         activation,        NoAttrs,               (),           0, false, (relu_backward)) \
  X(relu_backward,                activation,        NoAttrs,               (),           0, false, ())           \
  X(sigmoid,                      activation,        NoAttrs,               (),           0, false, ())           \
  X(tanh,                         activation,        NoAttrs,               (),           0, false, ())           \
  X(silu,                         activation,        NoAttrs,               (),           0, false, ())           \
  X(gelu,                         activation,        GeluAttrs,             (),           0, false, (gelu_backward)) \
  X(gelu_backward,                activation,        GeluAttrs,             (),           0, false, ())           \
  /* binary: arithmetic of two broadcast tensors */                                                              \
  X(add,                          binary,            AlphaAttrs,            (),           0, false, ())           \
  X(sub,                          binary,            AlphaAttrs,            (),           0, false, ())           \
  X(mul,                          binary,            NoAttrs,               (),           0, false, ())           \
  X(div,                          binary,            NoAttrs,               (),           0, false, ())           \
  /* maximum: elementwise maximum and minimum, NaN-propagating */                                                \
  X(maximum,                      maximum,           NoAttrs,               (),           0, false, ())           \
  X(minimum,                      maximum,           NoAttrs,               (),           0, false, ())           \
  /* compare: comparisons and logical connectives, bool results */                                               \
  X(eq,                           compare,           NoAttrs,               (),           0, false, ())           \
  X(ne,                           compare,           NoAttrs,               (),           0, false, ())           \
  X(lt,                           compare,           NoAttrs,               (),           0, false, ())           \
  X(le,                           compare,           NoAttrs,               (),           0, false, ())           \
  X(gt,                           compare,           NoAttrs,               (),           0, false, ())           \
  X(ge,                           compare,           NoAttrs,               (),           0, false, ())           \
  X(logical_and,                  compare,           NoAttrs,               (),           0, false, ())           \
  X(logical_or,                   compare,           NoAttrs,               (),           0, false, ())           \
  X(logical_xor,                  compare,           NoAttrs,               (),           0, false, ())           \
  /* pow, where, clamp */                                                                                        \
  X(pow,                          pow,               NoAttrs,               (),           0, false, ())           \
  X(where,                        where,             NoAttrs,               (),           0, false, ())           \
  X(clamp,                        clamp,             ClampAttrs,            (),           0, false, ())           \
  /* reductions over rows */                                                                                     \
  X(sum,                          reduce_sum,        NoAttrs,               (),           0, false, ())           \
  X(amax,                         reduce_minmax,     NoAttrs,               (),           0, false, ())           \
  X(amin,                         reduce_minmax,     NoAttrs,               (),           0, false, ())           \
  X(max_dim,                      reduce_minmax,     NoAttrs,               (),           0, false, ())           \
  X(min_dim,                      reduce_minmax,     NoAttrs,               (),           0, false, ())           \
  X(norm,                         reduce_norm,       NormAttrs,             (),           0, false, ())           \
  X(var,                          reduce_var,        VarAttrs,              (),           0, false, ())           \
  /* scan, sort */                                                                                               \
  X(cumsum,                       scan,              ScanAttrs,             (),           0, false, ())           \
  X(sort,                         sort,              SortAttrs,             (),           0, false, ())           \
  X(topk,                         sort,              TopkAttrs,             (),           0, false, ())           \
  /* range, random, copy: ops that fill or write a tensor */                                                     \
  X(arange_,                      range,             RangeAttrs,            (),           0, false, ())           \
  X(linspace_,                    range,             LinspaceAttrs,         (),           0, false, ())           \
  X(uniform_,                     random,            RandomAttrs,           (),           0, false, ())           \
  X(normal_,                      random,            RandomAttrs,           (),           0, false, ())           \
  X(randint_,                     random,            RandomAttrs,           (),           0, false, ())           \
  X(copy_,                        copy,              NoAttrs,               (),           0, false, ())           \
  X(fill_,                        copy,              FillAttrs,             (),           0, false, ())           \
  /* index: gathering and scattering by int64 indices */                                                         \
  X(index_select,                 index,             IndexDimAttrs,         (),           0, false, ())           \
  X(gather,                       index,             IndexDimAttrs,         (),           0, false, ())           \
  X(scatter_add,                  index,             IndexDimAttrs,         (),           0, false, ())           \
  /* matmul: every product is one batched GEMM */                                                                \
  X(bmm,                          matmul,            NoAttrs,               (),           0, false, ())           \
  /* conv2d; _relu: max(conv + bias, 0) in the same pass; _add_relu: max(conv + bias + residual, 0) */         \
  X(conv2d,                       conv2d,            Conv2dAttrs,           (),           0, false,              \
    (conv2d_backward_input, conv2d_backward_weight, conv2d_backward_bias))                                       \
  X(conv2d_relu,                  conv2d,            Conv2dAttrs,           (),           0, false,              \
    (conv2d_backward_input, conv2d_backward_weight, conv2d_backward_bias))                                       \
  X(conv2d_add_relu,              conv2d,            Conv2dAttrs,           (),           0, false,              \
    (conv2d_backward_input, conv2d_backward_weight, conv2d_backward_bias))                                       \
  X(conv2d_backward_input,        conv2d,            Conv2dAttrs,           (),           0, false, ())           \
  X(conv2d_backward_weight,       conv2d,            Conv2dAttrs,           (),           0, false, ())           \
  X(conv2d_backward_bias,         conv2d,            NoAttrs,               (),           0, false, ())           \
  /* pooling */                                                                                                  \
  X(max_pool2d,                   pooling,           Pool2dAttrs,           (),           0, false, (max_pool2d_backward)) \
  X(max_pool2d_backward,          pooling,           Pool2dAttrs,           (),           0, false, ())           \
  X(avg_pool2d,                   pooling,           Pool2dAttrs,           (),           0, false, (avg_pool2d_backward)) \
  X(avg_pool2d_backward,          pooling,           Pool2dAttrs,           (),           0, false, ())           \
  X(adaptive_avg_pool2d,          pooling,           NoAttrs,               (),           0, false, (adaptive_avg_pool2d_backward)) \
  X(adaptive_avg_pool2d_backward, pooling,           NoAttrs,               (),           0, false, ())           \
  /* batch_norm; _relu: max(y, 0); _add_relu: max(y + residual, 0), the residual a sixth input */               \
  X(batch_norm,                   batch_norm,        BatchNormAttrs,        (1, 2, 6),    0, false, (batch_norm_backward)) \
  X(batch_norm_relu,              batch_norm,        BatchNormAttrs,        (1, 2, 6),    0, false, (batch_norm_backward)) \
  X(batch_norm_add_relu,          batch_norm,        BatchNormAttrs,        (1, 2, 6),    0, false, (batch_norm_backward)) \
  X(batch_norm_backward,          batch_norm,        BatchNormAttrs,        (),           0, false, ())           \
  /* layer_norm */                                                                                               \
  X(layer_norm,                   layer_norm,        LayerNormAttrs,        (),           0, false, (layer_norm_backward)) \
  X(layer_norm_backward,          layer_norm,        NoAttrs,               (),           0, false, ())           \
  /* softmax */                                                                                                  \
  X(softmax,                      softmax,           NoAttrs,               (),           0, false, (softmax_backward)) \
  X(log_softmax,                  softmax,           NoAttrs,               (),           0, false, (log_softmax_backward)) \
  X(softmax_backward,             softmax,           NoAttrs,               (),           0, false, ())           \
  X(log_softmax_backward,         softmax,           NoAttrs,               (),           0, false, ())           \
  /* attention_softmax: attention's scale, mask, softmax and dropout in one pass */                             \
  X(attention_softmax,            attention_softmax, AttentionSoftmaxAttrs, (),           0, false, (attention_softmax_backward)) \
  X(attention_softmax_backward,   attention_softmax, AttentionSoftmaxAttrs, (),           0, false, ())           \
  /* fused_attention: the whole of attention, saving the output and each row's log-sum-exp, not the weights */  \
  X(fused_attention,              fused_attention,   FusedAttentionAttrs,   (),           0, false, (fused_attention_backward)) \
  X(fused_attention_backward,     fused_attention,   FusedAttentionAttrs,   (),           0, false, ())           \
  /* dropout, embedding */                                                                                       \
  X(dropout,                      dropout,           DropoutAttrs,          (),           0, false, (dropout_backward)) \
  X(dropout_backward,             dropout,           DropoutAttrs,          (),           0, false, ())           \
  /* dropout_add_layer_norm: layer_norm(dropout(x) + residual), a transformer block's tail */                    \
  X(dropout_add_layer_norm,       dropout_add_layer_norm, DropoutAddLayerNormAttrs, (),       0, false,          \
    (dropout_add_layer_norm_backward))                                                                           \
  X(dropout_add_layer_norm_backward, dropout_add_layer_norm, DropoutAddLayerNormAttrs, (),    0, false, ())      \
  X(embedding,                    embedding,         NoAttrs,               (),           0, false, (embedding_backward)) \
  X(embedding_backward,           embedding,         EmbeddingAttrs,        (),           0, false, ())           \
  /* loss */                                                                                                     \
  X(cross_entropy,                loss,              CrossEntropyAttrs,     (),           0, false, (cross_entropy_backward)) \
  X(cross_entropy_backward,       loss,              CrossEntropyAttrs,     (),           0, false, ())           \
  X(nll_loss,                     loss,              NllLossAttrs,          (),           0, false, (nll_loss_backward)) \
  X(nll_loss_backward,            loss,              NllLossAttrs,          (),           0, false, ())           \
  /* optim: one update of one parameter, or of many (foreach), in place */                                       \
  X(sgd_step,                     optim,             SgdStepAttrs,          (0, 2),       0, false, ())           \
  X(adam_step,                    optim,             AdamStepAttrs,         (0, 2, 3, 4), 0, false, ())           \
  X(sgd_step_foreach,             optim,             SgdStepAttrs,          (0, 2),       3, false, ())           \
  X(adam_step_foreach,            optim,             AdamStepAttrs,         (0, 2, 3, 4), 5, false, ())           \
  X(clip_grad_norm_foreach,       optim,             ClipGradNormAttrs,     (0),          1, false, ())
// clang-format on
