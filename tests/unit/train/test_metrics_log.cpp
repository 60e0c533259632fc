#include <fstream>

#include <gtest/gtest.h>

#include "hearth/train/metrics_log.h"
#include "tests/support/temp_dir.h"

namespace hearth::train {
namespace {

using hearth::testing::read_file;
using hearth::testing::TempDir;

TEST(MetricsJsonl, WritesOneObjectPerLine) {
  TempDir dir;
  std::string path = dir.file("out/metrics.jsonl");
  MetricsJsonlCallback cb(path);
  TrainingArguments args;
  TrainerState state;
  TrainerControl control;
  cb.on_train_begin(args, state, control);
  EXPECT_EQ(read_file(path), "");
  cb.on_log(args, state, control, {{"loss", 0.5}, {"step", 1}});
  cb.on_log(args, state, control, {{"eval_loss", 0.25}, {"step", 1}});
  EXPECT_EQ(read_file(path), "{\"loss\":0.5,\"step\":1}\n{\"eval_loss\":0.25,\"step\":1}\n");
}

TEST(MetricsJsonl, AResumedRunRewritesTheFileFromTheCheckpointsHistory) {
  TempDir dir;
  std::string path =
      dir.write("metrics.jsonl", "{\"loss\":1,\"step\":1}\n{\"loss\":2,\"step\":2}\n{\"loss\":3,\"step\":3}\n");
  MetricsJsonlCallback cb(path);
  TrainingArguments args;
  TrainerState state;
  TrainerControl control;
  state.global_step = 2;
  state.log_history = {{{"loss", 1}, {"step", 1}}, {{"loss", 2}, {"step", 2}}};
  cb.on_train_begin(args, state, control);
  cb.on_log(args, state, control, {{"loss", 5}, {"step", 3}});
  EXPECT_EQ(read_file(path), "{\"loss\":1,\"step\":1}\n{\"loss\":2,\"step\":2}\n{\"loss\":5,\"step\":3}\n");
}

TEST(MetricsJsonl, LogsOutsideTrainingAppend) {
  TempDir dir;
  std::string path = dir.write("metrics.jsonl", "{\"a\":1}\n");
  MetricsJsonlCallback cb(path);
  TrainingArguments args;
  TrainerState state;
  TrainerControl control;
  cb.on_log(args, state, control, {{"b", 2}});
  EXPECT_EQ(read_file(path), "{\"a\":1}\n{\"b\":2}\n");
}

}  // namespace
}  // namespace hearth::train
