// Low-precision copies of parameters, written by the optimizer's update.
//
// Under bf16/fp16 autocast every float32 weight is cast once per step, one
// kernel per weight reading 4 bytes and writing 2 per element (ResNet-50: 53
// casts a step, VGG16: 0.8 GB of traffic). The optimizer's update already
// holds each new weight value in registers, so it can write the 16-bit copy
// too (2 bytes per element, no kernel), as apex's fused optimizers with master
// weights do. This registry connects the two:
// - autocast, casting a parameter in a training forward (grad mode on), says
//   the parameter wants a copy in that dtype (want_param_half_copy);
// - the optimizer's update writes the copy of every parameter that wants one
//   (param_half_copy_to_write, then mark_param_half_copy_written with the
//   parameter's new version);
// - the next forward uses the copy instead of casting, while the parameter's
//   version is still the one the copy was written for (valid_param_half_copy).
//   Anything else that writes the parameter (in-place ops, copy_,
//   load_state_dict) bumps its version, and autocast casts as before.
//
// A copy has the parameter's shape and layout (a channels_last weight's copy
// is channels_last, as its cast would be), is allocated once and written in
// place from then on: a recorded step graph reads it at a fixed address. A
// want never expires while the parameter lives (a replayed forward runs no
// host code to renew it). Entries hold their parameter weakly: a dead model's
// copies are freed. One copy per parameter (the first dtype wanted): a model
// trained in one precision wants one.
//
// set_optimizer_half_copies_enabled(false) turns it off (autocast casts every step).
#pragma once

#include <cstddef>
#include <vector>

#include "hearth/core/tensor.h"

namespace hearth {

// On unless set_optimizer_half_copies_enabled(false) (tests compare both in
// one process). Off: no copy is wanted, written or used.
bool optimizer_half_copies_enabled();
void set_optimizer_half_copies_enabled(bool on);

// The copy of `param` in `dtype` when it holds cast(param, dtype) now (written
// for the parameter's current memory and version); undefined otherwise.
Tensor valid_param_half_copy(const Tensor& param, DType dtype);

// Records that the optimizer should write a `dtype` copy of `param` (a float32
// tensor; dtype bfloat16 or float16). Nothing for other dtypes or when the
// parameter already has a copy.
void want_param_half_copy(const Tensor& param, DType dtype);

// The copy the update of `param` should write as well, allocated on first use;
// undefined when none is wanted. Optimizer::step() asks for every parameter
// it updates before writing anything, so an allocation that fails leaves the
// step undone.
Tensor param_half_copy_to_write(const Tensor& param);

// After an update wrote `copy` (from param_half_copy_to_write) with the
// parameter's new values and bumped the parameter's version: the copy is
// valid for that version. Bumps the copy's own version (a graph that saved
// the old copy for a backward not yet run would read new values).
void mark_param_half_copy_written(const Tensor& param, const Tensor& copy);

// Writes the copies of `params` that no longer match their parameter (written
// outside the optimizer since), in place, and marks them valid. A recorded
// step graph reads the copies without autocast's check: it calls this before
// each replay.
void refresh_param_half_copies(const std::vector<Tensor>& params);

// How many parameters have a copy wanted or written (tests).
size_t param_half_copy_count();
// Forgets every copy (tests).
void clear_param_half_copies();

}  // namespace hearth
