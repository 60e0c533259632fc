// A backend of primitive ops alone trains models: the MLP and the small CNN
// through the Trainer on testdev (tests/support/testdev/: every primitive, no
// fusion), with the fusions a step reaches (AdamW's adam_step_foreach, the
// gradient clipping's clip_grad_norm_foreach) composed on the device, nothing
// sent to the CPU, and the losses of the same run on the CPU, whose fused
// kernels they are held to (to float32 rounding: the compositions round
// between their primitives).
#include <algorithm>
#include <cmath>
#include <memory>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "hearth/dispatch/dispatch.h"
#include "hearth/nn/models/small_cnn.h"
#include "tests/support/temp_dir.h"
#include "tests/support/test_device.h"
#include "tests/unit/train/train_testing.h"

namespace hearth::train {
namespace {

using hearth::testing::TempDir;
using testing::LossRecorder;
using testing::quiet;
using testing::toy_args;
using testing::toy_dataset;
using testing::toy_model;

// n grey 8x8 images in 2 classes: a bright top-left or bottom-right square under noise.
std::shared_ptr<const data::Dataset> squares(int64_t n) {
  manual_seed(5);
  std::vector<float> px = randn({n, 1, 8, 8}).to_vector<float>();
  std::vector<int64_t> labels = randint(0, 2, {n}).to_vector<int64_t>();
  for (int64_t i = 0; i < n; ++i) {
    const int64_t r0 = labels[static_cast<size_t>(i)] == 0 ? 0 : 4;
    for (int64_t r = r0; r < r0 + 4; ++r)
      for (int64_t q = r0; q < r0 + 4; ++q) px[static_cast<size_t>(i * 64 + r * 8 + q)] += 1.5f;
  }
  return std::make_shared<data::TensorDataset>(data::Example::Map{{data::field::kPixelValues, tensor(px, {n, 1, 8, 8})},
                                                                  {data::field::kLabels, tensor(labels, {n})}});
}

std::shared_ptr<nn::Module> small_cnn() {
  manual_seed(3);
  return std::make_shared<nn::models::SmallCNN>(nn::models::SmallCNNConfig{
      .num_classes = 2, .image_size = 8, .channels1 = 4, .channels2 = 8, .hidden = 16, .dropout = 0.2});
}

struct TrainingRun {
  std::vector<double> losses;
  std::map<std::string, int64_t> composed;
  std::map<std::string, FallbackStats> fell_back;
};

TrainingRun train_on(const std::string& device, std::shared_ptr<nn::Module> model,
                     std::shared_ptr<const data::Dataset> data, int64_t batch) {
  TempDir dir;
  TrainingArguments args = toy_args(dir.file("out"));
  args.per_device_train_batch_size = batch;
  args.max_grad_norm = 1.0;  // clip_grad_norm_foreach every step
  args.use_cpu = device == "cpu";
  args.device = device;
  auto rec = std::make_shared<LossRecorder>();
  reset_composed_calls();
  reset_fallback_stats();
  Trainer trainer(model, args, data, nullptr, {rec}, quiet());
  trainer.train();
  return TrainingRun{rec->losses, composed_calls(), fallback_stats()};
}

void expect_same_training(const TrainingRun& cpu, const TrainingRun& dev, const std::string& what) {
  ASSERT_FALSE(cpu.losses.empty()) << what;
  ASSERT_EQ(dev.losses.size(), cpu.losses.size()) << what;
  for (size_t i = 0; i < cpu.losses.size(); ++i)
    EXPECT_NEAR(dev.losses[i], cpu.losses[i], 2e-5 * std::max(1.0, std::abs(cpu.losses[i])))
        << what << ": step " << i + 1;
  EXPECT_TRUE(dev.fell_back.empty()) << what << ": " << dev.fell_back.size() << " op(s) fell back to the CPU";
  const int64_t steps = static_cast<int64_t>(cpu.losses.size());
  auto count = [&](const char* op) {
    auto it = dev.composed.find(op);
    return it == dev.composed.end() ? int64_t{0} : it->second;
  };
  // One call per step and parameter group (AdamW's groups with and without
  // weight decay).
  EXPECT_GE(count("adam_step_foreach"), steps) << what;
  EXPECT_EQ(count("adam_step_foreach") % steps, 0) << what;
  EXPECT_EQ(count("clip_grad_norm_foreach"), steps) << what;
  // Nothing is composed on the CPU, which has every fused kernel.
  EXPECT_TRUE(cpu.composed.empty()) << what;
}

TEST(PrimitivesOnlyTraining, MlpTrainsOnTestdevAsOnTheCpu) {
  const TrainingRun cpu = train_on("cpu", toy_model(0), toy_dataset(48), 8);
  const TrainingRun dev = train_on(hearth::testing::test_device().str(), toy_model(0), toy_dataset(48), 8);
  expect_same_training(cpu, dev, "MLP");
}

TEST(PrimitivesOnlyTraining, SmallCnnTrainsOnTestdevAsOnTheCpu) {
  const TrainingRun cpu = train_on("cpu", small_cnn(), squares(48), 16);
  const TrainingRun dev = train_on(hearth::testing::test_device().str(), small_cnn(), squares(48), 16);
  expect_same_training(cpu, dev, "small CNN");
}

}  // namespace
}  // namespace hearth::train
