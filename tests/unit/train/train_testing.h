// Shared pieces of the Trainer tests: a small separable classification task
// over a TensorDataset, a tiny MLP, arguments that keep runs fast and quiet,
// and a callback that records every step's loss.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "hearth/core/generator.h"
#include "hearth/data/dataset.h"
#include "hearth/nn/models/mlp.h"
#include "hearth/ops/factory.h"
#include "hearth/train/callbacks.h"
#include "hearth/train/trainer.h"
#include "hearth/train/training_arguments.h"

namespace hearth::train::testing {

// n samples of 4 features in 3 classes: the class is the argmax of the
// first three features, so the task is learnable.
inline std::shared_ptr<const data::Dataset> toy_dataset(int64_t n, uint64_t seed = 7, DType dtype = DType::float32) {
  uint64_t s0 = default_generator().seed(), o0 = default_generator().offset();
  manual_seed(seed);
  Tensor x = randn({n, 4}, DType::float32);
  default_generator().set_state(s0, o0);
  std::vector<float> xs = x.to_vector<float>();
  std::vector<int64_t> labels(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i) {
    const float* r = xs.data() + i * 4;
    labels[static_cast<size_t>(i)] = r[0] >= r[1] && r[0] >= r[2] ? 0 : (r[1] >= r[2] ? 1 : 2);
  }
  return std::make_shared<data::TensorDataset>(
      data::Example::Map{{data::field::kPixelValues, x.to(dtype)}, {data::field::kLabels, tensor(labels, {n})}});
}

// Seeds the generator, then builds MLP(4 -> 16 -> 3) with dropout, so that
// resuming must restore the RNG to reproduce the losses.
inline std::shared_ptr<nn::models::MLP> toy_model(uint64_t seed = 0, double dropout = 0.1) {
  manual_seed(seed);
  return std::make_shared<nn::models::MLP>(4, std::vector<int64_t>{16}, 3, dropout);
}

inline TrainingArguments toy_args(const std::string& output_dir) {
  TrainingArguments a;
  a.output_dir = output_dir;
  a.per_device_train_batch_size = 8;
  a.per_device_eval_batch_size = 16;
  a.learning_rate = 1e-2;
  a.num_train_epochs = 2;
  a.logging_steps = 1;
  a.save_strategy = "no";
  a.report_to = {"none"};
  a.use_cpu = true;
  return a;
}

// Options that keep the Trainer from printing.
inline TrainerOptions quiet() {
  TrainerOptions o;
  o.console = nullptr;
  return o;
}

// Reads each step's loss (a host sync per step: fine for tests).
class LossRecorder : public TrainerCallback {
 public:
  std::string name() const override { return "LossRecorder"; }
  void on_step_end(const TrainingArguments&, TrainerState& state, TrainerControl&) override {
    steps.push_back(state.global_step);
    losses.push_back(state.step_loss.item<double>());
  }
  std::vector<int64_t> steps;
  std::vector<double> losses;
};

}  // namespace hearth::train::testing
