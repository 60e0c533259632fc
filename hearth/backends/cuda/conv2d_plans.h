// conv2d through cuDNN's graph API: an execution plan per shape, built on
// first use and replayed (conv2d_plans.cu); conv2d.cu keeps cuDNN's legacy
// entry points for what no plan takes.
#pragma once

#include <cudnn.h>

#include <cstddef>

#include "hearth/core/tensor.h"
#include "hearth/dispatch/schemas/conv2d.h"

namespace hearth::cuda {

enum class ConvPass { forward, backward_data, backward_filter };

// Workspace above this is not worth the memory (cuDNN has fast algorithms that need less).
constexpr size_t kMaxConvWorkspace = size_t(2) << 30;

// Whether a call runs in NHWC. The functional layer makes x, w and y dense in
// one format, so x decides; a 1x1 or depthwise weight has the same memory in
// both formats and is declared in x's.
inline bool channels_last(const Tensor& x) { return x.suggest_memory_format() == MemoryFormat::channels_last; }

// A byte buffer for cuDNN's workspace; undefined for 0 bytes.
inline Tensor workspace_tensor(size_t bytes, Device d) {
  return bytes ? Tensor::empty({static_cast<int64_t>(bytes)}, DType::uint8, d) : Tensor();
}

// The backend options' convolution benchmark (cudnn.benchmark; starts from
// HEARTH_CUDNN_BENCHMARK): each plan is the fastest of the heuristics' first
// candidates, timed on first use; the legacy path times its algorithms. Read
// at every call; plans key on it.
bool cudnn_benchmark_mode();

// Runs one pass over x [N,C,H,W], w [O,Cg,kH,kW], y [N,O,OH,OW] (in the
// backward passes x or w is the gradient written) through its plan; false
// when the graph path does not take the call (the caller's legacy path does).
// accumulate (backward_data only): x's gradient is added into what x holds
// (beta = 1), by a plan of its own; false when no engine takes that graph
// (the caller computes into a tensor of its own and adds).
bool run_graph_pass(ConvPass pass, const Tensor& x, const Tensor& w, const Tensor& y, const Conv2dAttrs& a,
                    cudnnHandle_t h, bool accumulate = false);

// The forward with its epilogue (bias, residual, ReLU: any of them defined or
// set) as one fused graph, where an engine takes it (and HEARTH_CUDNN_FUSION
// is not 0); false otherwise.
bool run_fused_forward(const Tensor& x, const Tensor& w, const Tensor& y, const Tensor& bias, const Tensor& residual,
                       const Conv2dAttrs& a, cudnnHandle_t h);

}  // namespace hearth::cuda
