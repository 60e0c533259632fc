// Steps run as recorded device graphs where the device can record them
// (DeviceRuntime::StepGraph; CUDA graphs on CUDA).
//
// GraphedStep: a step run as a recorded device graph where it can be: eagerly
// for the first calls (plans, autotuning and state made on first use), then
// once eagerly under watch (the rehearsal), then recorded once and replayed at
// every later call, one launch instead of hundreds. A step that cannot be
// recorded keeps running eagerly and fallback_reason() says why, so the caller
// can tell the user once.
//
// GraphedBatchStep: a step on a batch as a GraphedStep. A recorded graph
// reads and writes the addresses it was recorded with, so:
// - the batch goes through inputs of the step's own, device tensors made from
//   a batch; each later batch of the same shapes is copied into them before
//   the step, outside it (a copy from the host inside a recorded step would
//   replay the recording's data);
// - the step's outputs are copied, inside the step, into device tensors of
//   its own, and each call hands back copies of them;
// - the memory the step reads or writes beyond those (parameters, their
//   gradients, buffers) must stay where it was recorded: before each replay
//   its addresses are compared with the recorded ones, and if anything
//   replaced them the graph is given up (the step runs eagerly from then on
//   and fallback_reason() says why).
// The inputs take the shapes of the first batch the caller lets them take
// (the Trainer: the first full batch, so that a run resumed just before an
// epoch's smaller last batch records the full batches that follow). A batch
// of other shapes (the smaller last batch of an epoch) runs eagerly, on its
// own tensors.
//
// GraphedTrainingStep: the Trainer's forward and backward as a
// GraphedBatchStep (TrainingArguments::step_graphs; the Trainer's side is in
// trainer_step_graphs.cpp): its output is the loss, and the gradients must
// stay where they were recorded, so the step zeroes them in place and the
// caller must not drop them between steps. The Trainer's evaluation records
// its forward the same way (trainer_evaluate.cpp), with the parameters and
// buffers watched.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "hearth/core/device.h"
#include "hearth/core/device_runtime.h"
#include "hearth/data/dataset.h"

namespace hearth::train {

class GraphedStep {
 public:
  // `eager_calls`: calls run eagerly before the rehearsal.
  GraphedStep(Device device, std::function<void()> step, int eager_calls = 1);
  // Runs the step once: eagerly, rehearsed, or by queuing the recorded graph.
  void operator()();
  bool replaying() const { return graph_ != nullptr; }
  // Why the step runs eagerly for good; empty while it may still be recorded or is.
  const std::string& fallback_reason() const { return reason_; }

 private:
  Device device_;
  std::function<void()> step_;
  int eager_left_;
  bool rehearsed_ = false;
  std::unique_ptr<DeviceRuntime::StepGraph> graph_;
  std::string reason_;
};

class GraphedBatchStep {
 public:
  // The step on `batch`: its outputs (undefined ones allowed, always the same
  // ones for batches of the same shapes). It must move the batch to the device
  // itself (it is given the host batch when it runs eagerly on a batch of other shapes).
  using Body = std::function<std::vector<Tensor>(const data::Batch& batch)>;
  // The addresses, in a fixed order, of the memory the step uses besides its
  // inputs and outputs.
  using Addresses = std::function<std::vector<const void*>()>;

  // `params`: the parameters whose low-precision copies a recorded forward
  // reads (hearth/ops/param_half_copies.h; stale ones are rewritten before
  // each replay). `replaced_reason`: what fallback_reason() says once the
  // watched addresses changed.
  GraphedBatchStep(Device device, Body body, std::vector<Tensor> params, Addresses watched,
                   std::string replaced_reason);

  // Runs the step on `batch`: replayed (after a warm-up call and a rehearsal)
  // when its fields have the recorded shapes and dtypes, else eagerly.
  // `may_record`: whether the batch's shapes may become the recorded ones
  // (asked until one has). The outputs are the caller's: later calls do not
  // write them.
  std::vector<Tensor> operator()(const data::Batch& batch, bool may_record = true);

  bool replaying() const { return step_ && step_->replaying(); }
  // Why every step runs eagerly from now on; empty while steps may be, or are, replayed.
  const std::string& fallback_reason() const;
  // Steps whose work the recorded graph did.
  int64_t replayed_steps() const { return replayed_; }
  // Steps run eagerly on a batch whose shapes differ from the recorded ones
  // (or, before any were chosen, that the caller did not let be recorded).
  int64_t other_shape_steps() const { return other_shapes_; }
  // Whether the watched memory moved since the recording (the next call gives it up).
  bool watched_memory_moved() const { return replaying() && watched_() != recorded_addresses_; }

 private:
  bool matches_inputs(const data::Batch& batch) const;
  void make_inputs(const data::Batch& batch);

  Device device_;
  Body body_;
  std::vector<Tensor> params_;
  Addresses watched_;
  std::string replaced_reason_;
  data::Batch inputs_;
  std::vector<Tensor> outputs_;
  std::unique_ptr<GraphedStep> step_;
  std::vector<const void*> recorded_addresses_;
  std::string reason_;
  int64_t replayed_ = 0, other_shapes_ = 0;
};

class GraphedTrainingStep {
 public:
  // The step's forward, loss and backward on `batch`, returning the loss
  // (0-d). It must zero the gradients in place first
  // (zero_grad(set_to_none=false)) and move the batch to the device itself
  // (it is given the host batch when it runs eagerly on a batch of other shapes).
  using ForwardBackward = std::function<Tensor(const data::Batch& batch)>;
  // `params`: the trained parameters, whose gradients the step writes.
  GraphedTrainingStep(Device device, ForwardBackward forward_backward, std::vector<Tensor> params);

  // Runs one step on `batch` (GraphedBatchStep's call). Returns the step's
  // loss on the device, a tensor of its own.
  Tensor operator()(const data::Batch& batch, bool may_record = true) { return step_(batch, may_record).front(); }

  bool replaying() const { return step_.replaying(); }
  const std::string& fallback_reason() const { return step_.fallback_reason(); }
  int64_t replayed_steps() const { return step_.replayed_steps(); }
  int64_t other_shape_steps() const { return step_.other_shape_steps(); }

 private:
  GraphedBatchStep step_;
};

// The addresses of `params`' memory and of their gradients' (null where none), in order.
std::vector<const void*> parameter_and_gradient_addresses(const std::vector<Tensor>& params);

}  // namespace hearth::train
