// `hearth train --devices 2 --cpu`: the command starts itself as two Gloo
// ranks; rank 0 alone prints and saves; a run resumed from a mid-run
// checkpoint with the same number of processes logs the same losses, and one
// with another number is refused with a message naming both.
#include <filesystem>
#include <fstream>
#include <regex>

#include <gtest/gtest.h>

#include "tests/support/temp_dir.h"
#include "tests/unit/distributed/dist_testing.h"

namespace hearth::testing {
namespace {

std::string train_command(const std::string& out_dir, int devices, const std::string& extra = "") {
  return "env OMP_WAIT_POLICY=passive OMP_NUM_THREADS=1 " + kHearth + " train --devices " + std::to_string(devices) +
         " --cpu --model small_cnn --max_train_samples 256 --max_eval_samples 64 --per_device_train_batch_size 16"
         " --max_steps 4 --logging_steps 1 --save_strategy steps --save_steps 2 --eval_strategy no --seed 3"
         " --disable_tqdm --output_dir " +
         out_dir + " " + extra;
}

std::vector<std::string> loss_lines(const std::string& metrics) {
  std::vector<std::string> out;
  std::ifstream in(metrics);
  for (std::string line; std::getline(in, line);)
    if (line.find("\"loss\":") != std::string::npos) out.push_back(line);
  return out;
}

TEST(TrainDevices, TwoCpuProcessesTrainSaveAndResume) {
  HEARTH_SKIP_WITHOUT_GLOO();
  TempDir dir;
  const std::string full = dir.path() + "/full";
  CommandResult r = run_command(train_command(full, 2));
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("[rank 0] hearth: data-parallel over 2 processes (gloo)"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("4 steps of 32 samples (batch 16 x 1 accumulation x 2 processes)"), std::string::npos)
      << r.output;
  EXPECT_NE(r.output.find("[rank 0] hearth: finished 4 steps"), std::string::npos) << r.output;
  EXPECT_EQ(r.output.find("[rank 1] hearth:"), std::string::npos) << "rank 1 printed:\n" << r.output;
  EXPECT_TRUE(std::filesystem::exists(full + "/checkpoint-2/model.safetensors"));
  EXPECT_TRUE(std::filesystem::exists(full + "/checkpoint-4/model.safetensors"));
  std::vector<std::string> losses = loss_lines(full + "/metrics.jsonl");
  ASSERT_EQ(losses.size(), 4u) << r.output;

  // Resumed at step 2 with two processes: the same losses, step for step.
  const std::string resumed = dir.path() + "/resumed";
  r = run_command(train_command(resumed, 2, "--resume_from_checkpoint " + full + "/checkpoint-2"));
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_EQ(loss_lines(resumed + "/metrics.jsonl"), losses) << r.output;

  // With one process the data position would mean something else: refused.
  r = run_command(train_command(dir.path() + "/one", 1, "--resume_from_checkpoint " + full + "/checkpoint-2"));
  EXPECT_NE(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("was saved by a run of 2 process(es) and this run has 1"), std::string::npos) << r.output;
}

}  // namespace
}  // namespace hearth::testing
