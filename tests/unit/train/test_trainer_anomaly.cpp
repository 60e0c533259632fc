// `--detect_anomaly` (TrainingArguments::detect_anomaly): the Trainer runs
// under a DetectAnomalyGuard and stops at the first op that made a NaN.
#include <limits>

#include <gtest/gtest.h>

#include "hearth/autograd/anomaly_mode.h"
#include "hearth/core/errors.h"
#include "hearth/data/dataset.h"
#include "hearth/train/trainer.h"
#include "tests/support/temp_dir.h"
#include "tests/unit/train/train_testing.h"

namespace hearth::train {
namespace {

using hearth::testing::TempDir;
using testing::quiet;
using testing::toy_args;
using testing::toy_model;

TEST(TrainerAnomaly, TheFlagReadsFromJsonAndDefaultsOff) {
  EXPECT_FALSE(TrainingArguments().detect_anomaly);
  TrainingArguments a = TrainingArguments::from_json(nlohmann::json{{"detect_anomaly", true}});
  EXPECT_TRUE(a.detect_anomaly);
  EXPECT_EQ(a.to_json()["detect_anomaly"], true);
  EXPECT_THROW(TrainingArguments::from_json(nlohmann::json{{"detect_anomaly", "maybe"}}), ValueError);
}

TEST(TrainerAnomaly, ANaNFromALearningRateTooLargeIsTracedToItsOp) {
  TempDir dir;
  TrainingArguments args = toy_args(dir.file("run"));
  args.max_steps = 3;
  args.learning_rate = 1e38;  // the first update overflows the weights
  args.optim = "sgd";
  args.detect_anomaly = true;
  Trainer t(toy_model(0, 0.0), args, testing::toy_dataset(32), nullptr, {}, quiet());
  try {
    t.train();
    FAIL() << "the overflowing run was not stopped";
  } catch (const NonFiniteError& e) {
    const std::string msg = e.what();
    EXPECT_NE(msg.find("[detect_anomaly] op '"), std::string::npos) << msg;
    EXPECT_NE(msg.find("inputs: "), std::string::npos) << msg;
  }
  EXPECT_FALSE(autograd::is_anomaly_enabled()) << "the guard outlived train()";
}

}  // namespace
}  // namespace hearth::train
