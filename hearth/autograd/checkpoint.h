// Activation checkpointing (torch.utils.checkpoint, the reentrant form): trade
// compute for memory by keeping only a block's inputs in the forward and
// running the block again in the backward.
//
// The forward runs `fn` without recording, so none of its intermediate
// tensors is saved. Its outputs get one backward node that keeps the inputs;
// when backward reaches it, `fn` runs again with recording on and the
// incoming gradients go back through that second graph: the inputs'
// gradients flow on, and the parameters `fn` uses receive theirs directly.
// The recomputation sees what the forward saw: the default generator is set
// back to where it was (dropout draws the same mask, also in a replayed step
// graph) and autocast is as it was on the inputs' device kind.
//
// As in PyTorch's reentrant form, gradients reach `fn`'s parameters only if
// some input requires grad (otherwise nothing is recorded to come back to).
#pragma once

#include <functional>
#include <vector>

#include "hearth/core/tensor.h"

namespace hearth::autograd {

using CheckpointedFn = std::function<std::vector<Tensor>(const std::vector<Tensor>&)>;

// fn(inputs), its intermediates recomputed in backward instead of kept. `fn`
// must compute the same thing both times (no state that changes between the
// runs other than random draws). Without grad mode it is just fn(inputs).
std::vector<Tensor> checkpoint(const CheckpointedFn& fn, const std::vector<Tensor>& inputs);

}  // namespace hearth::autograd
