// Automatic mixed precision (torch.autocast): inside an AutocastGuard, ops on
// tensors of the guarded device kind choose their own compute dtype.
//
//   {
//     AutocastGuard autocast(kCpu, DType::bfloat16);
//     Tensor loss = cross_entropy(model.forward(x), y);  // linear/conv in bf16, loss in float32
//   }
//   loss.backward();  // gradients reach the float32 parameters in float32
//
// Which op does what is one table (hearth/ops/autocast_policy.cpp):
// - products (matmul, mm, bmm, linear, conv2d, scaled_dot_product_attention,
//   fused_attention)
//   cast their floating inputs (not float64) to the autocast dtype: tensor
//   cores, half the memory traffic;
// - ops that need range or accuracy (softmax, log_softmax, losses, layer_norm,
//   sum, mean, exp, log, pow, norms, variances, cumsum) cast half inputs up to
//   float32;
// - ops that need one dtype across their inputs (scatter_add) take the widest;
// - every other op runs in the dtype its inputs promote to, as outside autocast
//   (batch_norm keeps its statistics in float32 for half inputs by itself).
//
// Casts are recorded by autograd, so gradients flow back through them. The cast
// of a parameter (a leaf that requires grad) is made once per autocast region
// and reused: a weight used by several ops is cast once. Recorded casts are
// dropped when the outermost guard closes and when a backward pass starts (it
// releases the casts' graph). Casts made under no-grad (evaluation) are kept
// across regions, so every batch of an evaluation reuses them, until a region
// opens with grad mode on (training resumes). A parameter written in place
// (its version changes) is cast again. In training the optimizer's update
// writes the cast of each parameter autocast cast (param_half_copies.h), and
// the next forward uses it instead of casting.
//
// Any other tensor's cast is shared by the ops that read the same tensor while
// it is alive and unchanged: BERT's float32 hidden state (LayerNorm runs in
// float32) is cast to bfloat16 once for its query, key and value projections,
// not once each. Under grad mode the shared cast is one node of the graph, so
// its gradient is the sum of its consumers' (added in the cast's dtype, where
// the linears' backward adds into the partial sum), cast back once. See
// autocast.cpp for what the cache holds (nothing alive by itself).
//
// The state is thread-local, like grad mode. Backward passes run with autocast
// suspended: backward formulas see the dtypes their forward chose.
#pragma once

#include <cstddef>
#include <cstdint>

#include "hearth/core/device.h"
#include "hearth/core/dtype.h"

namespace hearth {

// Whether autocast is on for ops on `kind` (and not suspended) on this thread.
bool autocast_enabled(DeviceKind kind);
// The dtype autocast casts products to on `kind` (meaningful while enabled).
DType autocast_dtype(DeviceKind kind);
// Whether autocast is on for any device kind (and not suspended): the fast path of every hooked op.
bool autocast_active();

// Throws TypeError unless `dtype` is bfloat16 or float16, and NotImplementedError
// naming the device kind, the dtype and the way out when that backend has no
// kernels for the products in `dtype`.
void check_autocast_supported(DeviceKind kind, DType dtype);

// Turns autocast on (or, with enabled = false, off) for `kind` for a scope;
// nests, restoring what was there before.
class AutocastGuard {
 public:
  explicit AutocastGuard(DeviceKind kind, DType dtype = DType::bfloat16, bool enabled = true);
  ~AutocastGuard();
  AutocastGuard(const AutocastGuard&) = delete;
  AutocastGuard& operator=(const AutocastGuard&) = delete;

 private:
  DeviceKind kind_;
  bool prev_enabled_;
  DType prev_dtype_;
};

// Hides autocast from every op for a scope (backward passes; the body of an op
// autocast already cast the inputs of).
class AutocastSuspend {
 public:
  AutocastSuspend();
  ~AutocastSuspend();
  AutocastSuspend(const AutocastSuspend&) = delete;
  AutocastSuspend& operator=(const AutocastSuspend&) = delete;

 private:
  bool prev_;
};

// Lifts an AutocastSuspend for a scope: a forward recomputed inside a
// backward pass (activation checkpointing) must autocast as the forward did.
class AutocastResume {
 public:
  AutocastResume();
  ~AutocastResume();
  AutocastResume(const AutocastResume&) = delete;
  AutocastResume& operator=(const AutocastResume&) = delete;

 private:
  bool prev_;
};

// Drops this thread's cached casts (parameters' and shared activations').
void clear_autocast_cache();
// Drops the casts that carry a graph (a backward pass releases it).
void drop_recorded_autocast_casts();
// How many parameter casts are cached (tests check that a weight is cast once).
size_t autocast_cache_size();

// Whether an activation's cast is shared by the ops that read it (above).
// On unless set_autocast_shared_casts_enabled(false) (tests compare both
// paths in one process). Parameters are cached either way.
bool autocast_shared_casts_enabled();
void set_autocast_shared_casts_enabled(bool on);
// How many casts autocast has made on this thread (parameters' and
// activations', not the reused ones): for tests and measurements.
uint64_t autocast_casts_made();

}  // namespace hearth
