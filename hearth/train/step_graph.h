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
// GraphedTrainingStep: the Trainer's forward and backward as a GraphedStep
// (TrainingArguments::step_graphs; the Trainer's side is in
// trainer_step_graphs.cpp). A recorded graph reads and writes the addresses it was recorded with, so:
// - the batch goes through inputs of the step's own, device tensors made from
//   a batch; each later batch of the same shapes is copied into them before
//   the step, outside it (a copy from the host inside a recorded step would
//   replay the recording's data);
// - the loss is copied, inside the step, into a device scalar of its own;
// - the gradients must stay where they were recorded: the step zeroes them in
//   place, and the caller must not drop them between steps. Before each
//   replay the parameters' and gradients' addresses are compared with the
//   recorded ones; if anything replaced them, the graph is given up (the
//   step runs eagerly from then on and fallback_reason() says why).
// The inputs take the shapes of the first batch the caller lets them take
// (the Trainer: the first full batch, so that a run resumed just before an
// epoch's smaller last batch records the full batches that follow). A batch
// of other shapes (the smaller last batch of an epoch) runs eagerly, on its
// own tensors.
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

class GraphedTrainingStep {
 public:
  // The step's forward, loss and backward on `batch`, returning the loss
  // (0-d). It must zero the gradients in place first
  // (zero_grad(set_to_none=false)) and move the batch to the device itself
  // (it is given the host batch when it runs eagerly on a batch of other shapes).
  using ForwardBackward = std::function<Tensor(const data::Batch& batch)>;
  // `params`: the trained parameters, whose gradients the step writes.
  GraphedTrainingStep(Device device, ForwardBackward forward_backward, std::vector<Tensor> params);

  // Runs one step on `batch`: replayed (after a warm-up call and a rehearsal)
  // when its fields have the recorded shapes and dtypes, else eagerly.
  // `may_record`: whether the batch's shapes may become the recorded ones
  // (asked until one has). Returns the step's loss on the device, a tensor
  // of its own.
  Tensor operator()(const data::Batch& batch, bool may_record = true);

  bool replaying() const { return step_ && step_->replaying(); }
  // Why every step runs eagerly from now on; empty while steps may be, or are, replayed.
  const std::string& fallback_reason() const;
  // Steps whose work the recorded graph did.
  int64_t replayed_steps() const { return replayed_; }
  // Steps run eagerly on a batch whose shapes differ from the recorded ones
  // (or, before any were chosen, that the caller did not let be recorded).
  int64_t other_shape_steps() const { return other_shapes_; }

 private:
  bool matches_inputs(const data::Batch& batch) const;
  void make_inputs(const data::Batch& batch);
  // The parameters' and gradients' memory, in order.
  std::vector<const void*> addresses() const;

  Device device_;
  ForwardBackward forward_backward_;
  std::vector<Tensor> params_;
  data::Batch inputs_;
  Tensor loss_;
  std::unique_ptr<GraphedStep> step_;
  std::vector<const void*> recorded_addresses_;
  std::string reason_;
  int64_t replayed_ = 0, other_shapes_ = 0;
};

}  // namespace hearth::train
