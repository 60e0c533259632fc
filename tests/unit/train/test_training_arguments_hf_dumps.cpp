// transformers 5's TrainingArguments.to_dict(), saved as JSON
// (tests/fixtures/hf/training_args_*.json, made by
// tests/fixtures/make_training_args_dumps.py), reads as hearth's
// TrainingArguments; and the values and spellings of transformers 5 that its
// command lines use are taken.
#include <filesystem>
#include <fstream>
#include <functional>
#include <string>

#include <gtest/gtest.h>

#include "hearth/core/errors.h"
#include "hearth/train/training_arguments.h"

namespace hearth::train {
namespace {

namespace fs = std::filesystem;
using json = nlohmann::json;

json read_fixture(const std::string& name) {
  std::ifstream in(fs::path(HEARTH_FIXTURES_DIR) / "hf" / name);
  EXPECT_TRUE(in.good()) << name;
  return json::parse(in);
}

std::string error_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const ValueError& e) {
    return e.what();
  }
  return "";
}

TEST(HuggingFaceDumps, TheDefaultsDumpReadsAsTheDefaults) {
  const json dump = read_fixture("training_args_defaults.json");
  TrainingArguments args;
  ASSERT_EQ(error_of([&] { args = TrainingArguments::from_json(dump, "training_args_defaults.json"); }), "");
  args.validate("training_args_defaults.json");
  EXPECT_EQ(args.optim, "adamw_torch_fused");
  EXPECT_EQ(args.report_to, std::vector<std::string>{"none"});  // [] is "none"
  EXPECT_DOUBLE_EQ(args.warmup_ratio, 0.0);                     // null leaves the default
  EXPECT_DOUBLE_EQ(args.learning_rate, 5e-5);
  EXPECT_EQ(args.precision, "fp32");
  // And it writes back what it read, for the fields Hugging Face has.
  const json back = args.to_json();
  for (const char* key : {"fsdp", "debug", "include_for_metrics", "fsdp_config", "accelerator_config",
                          "lr_scheduler_kwargs", "optim", "seed"})
    EXPECT_EQ(back[key], dump[key]) << key;
}

TEST(HuggingFaceDumps, TheOverridesDumpReadsItsValues) {
  const json dump = read_fixture("training_args_overrides.json");
  TrainingArguments args;
  ASSERT_EQ(error_of([&] { args = TrainingArguments::from_json(dump, "training_args_overrides.json"); }), "");
  args.validate("training_args_overrides.json");
  EXPECT_EQ(args.per_device_train_batch_size, 32);
  EXPECT_DOUBLE_EQ(args.learning_rate, 2e-5);
  EXPECT_DOUBLE_EQ(args.warmup_ratio, 0.1);
  EXPECT_EQ(args.precision, "bf16-mixed");
  EXPECT_EQ(args.eval_strategy, "epoch");
  EXPECT_TRUE(args.load_best_model_at_end);
  EXPECT_EQ(args.metric_for_best_model, std::optional<std::string>("accuracy"));
  EXPECT_EQ(args.report_to, std::vector<std::string>{"tensorboard"});
  EXPECT_EQ(args.save_total_limit, std::optional<int64_t>(2));
}

TEST(HuggingFaceDumps, FsdpConfigWithSomethingOnIsRefused) {
  json dump = read_fixture("training_args_defaults.json");
  dump["fsdp_config"]["xla"] = true;
  EXPECT_NE(error_of([&] { TrainingArguments::from_json(dump, "d.json"); }).find("field 'fsdp_config'"),
            std::string::npos);
}

TEST(HuggingFaceDumps, TransformersFiveValues) {
  TrainingArguments args;
  set_training_argument(args, "optim", "adamw_torch_fused", "--optim");
  EXPECT_EQ(args.optim, "adamw_torch_fused");
  set_training_argument(args, "save_strategy", "best", "--save_strategy");
  EXPECT_EQ(args.save_strategy, "best");
  for (const char* schedule : {"cosine_with_restarts", "polynomial"}) {
    set_training_argument(args, "lr_scheduler_type", schedule, "--lr_scheduler_type");
    EXPECT_EQ(args.lr_scheduler_type, schedule);
  }
  // save_strategy best keeps a model whenever evaluation finds a better one, so
  // load_best_model_at_end needs no matching strategies with it.
  TrainingArguments best;
  best.load_best_model_at_end = true;
  best.eval_strategy = "steps";
  best.eval_steps = 3;
  best.save_strategy = "best";
  EXPECT_EQ(error_of([&] { best.validate("cmd"); }), "");
}

TEST(HuggingFaceDumps, BooleansTakeStrtoboolSpellings) {
  for (const char* yes : {"T", "t", "true", "TRUE", "y", "Yes", "on", "ON", "1"}) {
    TrainingArguments args;
    set_training_argument(args, "bf16", yes, "--bf16");
    EXPECT_EQ(args.precision, "bf16-mixed") << yes;
  }
  for (const char* no : {"F", "f", "false", "N", "no", "OFF", "0"}) {
    TrainingArguments args;
    args.precision = "bf16-mixed";
    set_training_argument(args, "bf16", no, "--bf16");
    EXPECT_EQ(args.precision, "fp32") << no;
  }
  TrainingArguments args;
  EXPECT_NE(error_of([&] { set_training_argument(args, "bf16", "maybe", "--bf16"); }).find("--bf16"),
            std::string::npos);
}

TEST(HuggingFaceDumps, RemovedNamesSayWhatReplacedThem) {
  TrainingArguments args;
  std::string e =
      error_of([&] { set_training_argument(args, "per_gpu_train_batch_size", "8", "--per_gpu_train_batch_size"); });
  EXPECT_NE(e.find("removed"), std::string::npos) << e;
  EXPECT_NE(e.find("per_device_train_batch_size"), std::string::npos) << e;
  e = error_of([&] { TrainingArguments::from_json({{"group_by_length", true}}, "old.json"); });
  EXPECT_NE(e.find("old.json: field 'group_by_length'"), std::string::npos) << e;
  EXPECT_NE(e.find("train_sampling_strategy"), std::string::npos) << e;
}

}  // namespace
}  // namespace hearth::train
