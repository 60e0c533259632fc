// auto_find_batch_size under a real memory limit: the CPU allocator's limit
// (hearth/core/cpu_runtime.h) stands in for a smaller GPU.
#include <optional>
#include <sstream>

#include <gtest/gtest.h>

#include "hearth/core/device_runtime.h"
#include "hearth/core/errors.h"
#include "tests/support/temp_dir.h"
#include "tests/unit/train/train_testing.h"

namespace hearth::train {
namespace {

using hearth::testing::TempDir;

// A wide hidden layer, so that activations (which grow with the batch) dominate the memory.
std::shared_ptr<nn::Module> wide_model() {
  manual_seed(0);
  return std::make_shared<nn::models::MLP>(4, std::vector<int64_t>{2048}, 3, /*dropout=*/0.0);
}

TrainingArguments args_for(const std::string& dir, int64_t batch, int64_t accumulation) {
  TrainingArguments a = testing::toy_args(dir);
  a.per_device_train_batch_size = batch;
  a.gradient_accumulation_steps = accumulation;
  a.max_steps = 4;
  return a;
}

struct TrainingRun {
  std::vector<double> losses;
  size_t peak = 0;  // above the memory in use before the model was built
  int64_t micro_batch = 0;
};

TrainingRun train_run(const TrainingArguments& args, const std::shared_ptr<const data::Dataset>& data,
              std::optional<size_t> budget = std::nullopt, std::ostream* console = nullptr) {
  DeviceRuntime& cpu = device_runtime(kCpu);
  const size_t base = cpu.memory_stats(0).active;
  if (budget) cpu.set_memory_limit(0, base + *budget);
  cpu.reset_peak_memory_stats(0);
  TrainingRun run;
  try {
    auto recorder = std::make_shared<testing::LossRecorder>();
    TrainerOptions options = testing::quiet();
    options.console = console;
    Trainer trainer(wide_model(), args, data, nullptr, {recorder}, options);
    trainer.train();
    run.losses = recorder->losses;
    run.micro_batch = trainer.micro_batch_size();
  } catch (...) {
    cpu.set_memory_limit(0, 0);
    throw;
  }
  cpu.set_memory_limit(0, 0);
  run.peak = cpu.memory_stats(0).peak_active - base;
  return run;
}

TEST(AutoFindBatchSize, HalvesTheBatchKeepingTheSamplesPerStep) {
  TempDir dir;
  auto data = testing::toy_dataset(128);
  TrainingRun small = train_run(args_for(dir.file("a"), 8, 4), data);
  TrainingRun large = train_run(args_for(dir.file("b"), 32, 1), data);
  ASSERT_LT(small.peak * 5 / 4, large.peak) << "the batch must dominate the memory for this test";
  const size_t budget = (small.peak + large.peak) / 2;

  // Without auto_find_batch_size, the limit stops training.
  EXPECT_THROW(train_run(args_for(dir.file("c"), 32, 1), data, budget), OutOfMemoryError);

  TrainingArguments args = args_for(dir.file("d"), 32, 1);
  args.auto_find_batch_size = true;
  std::ostringstream console;
  TrainingRun found = train_run(args, data, budget, &console);
  EXPECT_LT(found.micro_batch, 32);
  EXPECT_GE(found.micro_batch, 8);
  EXPECT_LE(found.peak, budget);
  // Same samples per optimizer step, so the same losses as batches of 8 accumulated 4 times.
  ASSERT_EQ(found.losses.size(), small.losses.size());
  for (size_t i = 0; i < small.losses.size(); ++i)
    EXPECT_NEAR(found.losses[i], small.losses[i], 1e-5) << "step " << i + 1;
  const std::string said = console.str();
  EXPECT_NE(said.find("hearth: out of memory at step 1 with a batch of 32 on cpu; auto_find_batch_size: retrying with "
                      "batches of 16 and 2 gradient accumulation steps (still 32 samples per optimizer step)"),
            std::string::npos)
      << said;
}

TEST(AutoFindBatchSize, TheErrorPropagatesWhenNotEvenOneSampleFits) {
  TempDir dir;
  auto data = testing::toy_dataset(16);
  const size_t one = train_run(args_for(dir.file("a"), 1, 1), data).peak;
  TrainingArguments args = args_for(dir.file("b"), 4, 1);
  args.auto_find_batch_size = true;
  std::ostringstream console;
  EXPECT_THROW(train_run(args, data, one - 64, &console), OutOfMemoryError);
  // Halving stops at one sample; where the last attempt failed decides how far it got.
  const std::string said = console.str();
  EXPECT_EQ(said.find("batches of 0"), std::string::npos) << said;
}

}  // namespace
}  // namespace hearth::train
