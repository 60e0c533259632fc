// The Trainer's device-time lines on cuda:0: each epoch, and each
// evaluation, says how many steps and samples it timed, over how much device
// time, and how long the device sat idle between them.
#include <memory>
#include <sstream>
#include <string>

#include <gtest/gtest.h>

#include "hearth/core/generator.h"
#include "hearth/data/dataset.h"
#include "hearth/nn/nn.h"
#include "hearth/ops/factory.h"
#include "hearth/train/trainer.h"
#include "tests/gpu/gpu_test_util.h"
#include "tests/support/temp_dir.h"

namespace hearth::gpu_testing {
namespace {

// 52 samples: batches of 8 make 7 steps of which the last holds 4.
std::shared_ptr<const data::Dataset> samples() {
  manual_seed(4);
  Tensor x = randn({52, 6});
  Tensor y = randint(0, 3, {52});
  return std::make_shared<data::TensorDataset>(
      data::Example::Map{{data::field::kPixelValues, x}, {data::field::kLabels, y}});
}

TEST(TrainerTiming, EpochsAndEvaluationsReportTheirDeviceTime) {
  HEARTH_REQUIRE_CUDA();
  hearth::testing::TempDir dir;
  train::TrainingArguments args;
  args.output_dir = dir.file("run");
  args.device = cuda0().str();
  args.per_device_train_batch_size = 8;
  args.per_device_eval_batch_size = 8;
  args.num_train_epochs = 2;
  args.eval_strategy = "epoch";
  args.save_strategy = "no";
  args.report_to = {"none"};
  train::TrainerOptions options;
  std::ostringstream console;
  options.console = &console;
  options.progress_bar = false;
  manual_seed(9);
  auto model = std::make_shared<nn::Sequential>(std::make_shared<nn::Linear>(6, 16), std::make_shared<nn::ReLU>(),
                                                std::make_shared<nn::Linear>(16, 3));
  train::Trainer trainer(model, args, samples(), samples(), {}, options);
  trainer.train();
  const std::string out = console.str();
  for (const char* line : {"hearth: epoch 1: 7 training steps, 52 samples in ",
                           "hearth: epoch 2: 7 training steps, 52 samples in ",
                           "hearth: evaluation: 7 evaluation steps, 52 samples in "})
    EXPECT_NE(out.find(line), std::string::npos) << "missing '" << line << "' in:\n" << out;
  EXPECT_NE(out.find(" s of device time ("), std::string::npos) << out;
}

}  // namespace
}  // namespace hearth::gpu_testing
