// Which convolution calls go to oneDNN and which stay on the reference kernels
// (im2col + OpenBLAS), by what each pass measured on 2 cores with AVX-512
// (bench/NOTES.md, section 28; `bench_conv_passes` times every pass both
// ways). oneDNN computed most convolutions 1.5 to 2.4 times as fast
// (ResNet-50's past its stem, the small CNN's second one) and was slower on
// two kinds of small ones, which stay on the reference:
//
//  - under 16 input channels per group (a 1- or 3-channel stem): on the
//    tensors' own layouts, which convolution.cpp gives it there (blocked ones
//    pad the channels to 16), oneDNN runs its GEMM-based implementation, whose
//    backward-weights took up to 18 times as long as ours (the small CNN's
//    1-channel stem: 3.5 against 0.30 ms) and whose forward gained at most
//    1.36x (ResNet-50's stem), and not reliably;
//  - under 8M multiply-adds per thread while idle OpenMP threads sleep
//    (OMP_WAIT_POLICY=passive, as `make run` sets): each of a call's parallel
//    regions (the reorders to and from oneDNN's layouts, the primitive) then
//    wakes the team, 0.18-0.25 ms a call on an idle machine, which the
//    reference, with fewer regions and small work kept on one thread, does
//    not pay. Where threads spin (libgomp's default) oneDNN was faster at
//    every size measured, down to one 14x14 image, so the size does not count
//    there.
//
// HEARTH_ONEDNN_ALWAYS=1 sends every call oneDNN can take to it, for measuring.
#pragma once

#include "hearth/dispatch/op_call.h"

namespace hearth::cpu::onednn {

enum class Pass : int64_t { forward, backward_input, backward_weight };

// The call's operands as the schema gives them (dispatch/schemas/conv2d.h).
bool measured_faster(Pass pass, const OpCall& call);

}  // namespace hearth::cpu::onednn
