// The workloads `hearth bench` times: the reference benchmark's models
// (ResNet-50, VGG16, BERT-base) on synthetic data already on the device, with
// the optimizer a user of each would pick (SGD with momentum for the CNNs,
// AdamW for BERT), the same work bench/compare_pytorch.py gives PyTorch.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "apps/common/memory_estimate.h"
#include "hearth/core/device.h"
#include "hearth/distributed/process_group.h"

namespace hearth::cli {

struct WorkloadShape {
  int64_t batch_size = 0;  // 0: the model's reference batch
  int64_t image_size = 224;
  int64_t seq_len = 128;
  // CNNs only: channels_last (NHWC) weights and inputs, as PyTorch's
  // model.to(memory_format=torch.channels_last).
  bool channels_last = false;
  // Activation checkpointing where the model supports it (BERT's layers).
  bool gradient_checkpointing = false;
};

class Workload {
 public:
  virtual ~Workload() = default;
  // One optimizer step: forward, cross-entropy loss, backward, update.
  void train_step() {
    forward_backward(false);
    update();
  }
  // A training step without its update: gradients zeroed, forward, loss,
  // backward. keep_grads zeroes the gradients in place instead of dropping
  // them (set_to_none=false), as a recorded step graph needs.
  virtual void forward_backward(bool keep_grads) = 0;
  // The optimizer's update from the gradients of forward_backward.
  virtual void update() = 0;
  // Why forward_backward must not be recorded as a step graph; empty if it may.
  virtual std::string graph_obstacle() const = 0;
  // One forward pass without autograd, in eval mode.
  virtual void eval_step() = 0;
  virtual void set_training(bool training) = 0;
  virtual int64_t parameters() const = 0;
  // The step in pieces, for `hearth estimate-memory` (valid while the workload lives).
  virtual TrainingStepProbe memory_probe() = 0;
  // Data parallelism (under `hearth launch`): gradients are averaged over the
  // group in buckets during backward, as the Trainer does.
  virtual void enable_data_parallel(distributed::ProcessGroupPtr group) = 0;
  // Buckets of the last step launched before backward ended, and their number.
  virtual std::pair<size_t, size_t> overlapped_buckets() const = 0;
  // Mean device time per step, since the last call, that the step waited for
  // gradient all-reduces after backward (0 without data parallelism or events).
  virtual double exposed_communication_ms() = 0;
  int64_t batch_size = 0;
};

// "resnet50", "vgg16", "bert-base".
const std::vector<std::string>& bench_model_names();
// The reference benchmark's batch for a model: 128, 64, 64.
int64_t reference_batch_size(const std::string& model);
// Builds the model (seeded), its optimizer and one batch of random inputs on
// `device`. precision: "fp32", "bf16-mixed" (forward and loss under bfloat16
// autocast) or "fp16-mixed" (float16 autocast, and the loss scaler in training).
std::unique_ptr<Workload> make_workload(const std::string& model, const WorkloadShape& shape, Device device,
                                        const std::string& precision = "fp32");

}  // namespace hearth::cli
