#include <gtest/gtest.h>

#include "hearth/core/errors.h"
#include "hearth/data/dataloader.h"
#include "hearth/train/training_arguments.h"
#include "tests/support/temp_dir.h"

namespace hearth::train {
namespace {

using hearth::testing::TempDir;
using json = nlohmann::json;

// The message of the ValueError `fn` throws ("" when it does not throw).
template <typename F>
std::string value_error(F fn) {
  try {
    fn();
  } catch (const ValueError& e) {
    return e.what();
  }
  return "";
}

TEST(TrainingArguments, DefaultsAreHuggingFaces) {
  TrainingArguments a;
  EXPECT_EQ(a.per_device_train_batch_size, 8);
  EXPECT_EQ(a.per_device_eval_batch_size, 8);
  EXPECT_DOUBLE_EQ(a.learning_rate, 5e-5);
  EXPECT_DOUBLE_EQ(a.weight_decay, 0.0);
  EXPECT_DOUBLE_EQ(a.adam_beta1, 0.9);
  EXPECT_DOUBLE_EQ(a.adam_beta2, 0.999);
  EXPECT_DOUBLE_EQ(a.adam_epsilon, 1e-8);
  EXPECT_DOUBLE_EQ(a.max_grad_norm, 1.0);
  EXPECT_DOUBLE_EQ(a.num_train_epochs, 3.0);
  EXPECT_EQ(a.max_steps, -1);
  EXPECT_EQ(a.lr_scheduler_type, "linear");
  EXPECT_EQ(a.seed, 42);
  EXPECT_EQ(a.logging_steps, 500);
  EXPECT_EQ(a.eval_strategy, "no");
  EXPECT_EQ(a.save_strategy, "steps");
  EXPECT_EQ(a.save_steps, 500);
  EXPECT_FALSE(a.save_total_limit.has_value());
  EXPECT_EQ(a.device, "auto");
  EXPECT_EQ(a.effective_eval_steps(), 500);
  EXPECT_EQ(a.best_metric_key(), "eval_loss");
  EXPECT_FALSE(a.best_metric_greater_is_better());
  EXPECT_TRUE(a.writes_jsonl());
  EXPECT_NO_THROW(a.validate());
}

TEST(TrainingArguments, EveryFieldIsInTheTableAndRoundTripsThroughJson) {
  TrainingArguments a;
  a.output_dir = "runs/x";
  a.learning_rate = 3e-4;
  a.gradient_accumulation_steps = 4;
  a.eval_strategy = "steps";
  a.eval_steps = 50;
  a.save_total_limit = 2;
  a.metric_for_best_model = "accuracy";
  a.greater_is_better = true;
  a.resume_from_checkpoint = "latest";
  a.report_to = {"jsonl"};
  json j = a.to_json();
  EXPECT_EQ(j.size(), training_argument_fields().size());
  EXPECT_EQ(j["eval_steps"], 50);
  EXPECT_TRUE(TrainingArguments().to_json()["eval_steps"].is_null());
  TrainingArguments b = TrainingArguments::from_json(j);
  EXPECT_EQ(b.to_json(), j);
  EXPECT_EQ(b.best_metric_key(), "eval_accuracy");
  EXPECT_TRUE(b.best_metric_greater_is_better());
}

TEST(TrainingArguments, GradientCheckpointingIsOptInAndRoundTrips) {
  EXPECT_FALSE(TrainingArguments().gradient_checkpointing);
  TrainingArguments a = TrainingArguments::from_json(json{{"gradient_checkpointing", true}}, "cfg.json");
  EXPECT_TRUE(a.gradient_checkpointing);
  EXPECT_TRUE(TrainingArguments::from_json(a.to_json()).gradient_checkpointing);
}

TEST(TrainingArguments, StepGraphsIsOnByDefaultAndRoundTrips) {
  // Unset means on wherever the device records step graphs.
  EXPECT_FALSE(TrainingArguments().step_graphs.has_value());
  EXPECT_TRUE(TrainingArguments().to_json()["step_graphs"].is_null());
  TrainingArguments a = TrainingArguments::from_json(json{{"step_graphs", true}}, "cfg.json");
  EXPECT_EQ(a.step_graphs, true);
  EXPECT_EQ(a.to_json()["step_graphs"], true);
  EXPECT_EQ(TrainingArguments::from_json(a.to_json()).step_graphs, true);
  // A file written before the field existed keeps the default.
  json old = a.to_json();
  old.erase("step_graphs");
  EXPECT_FALSE(TrainingArguments::from_json(old).step_graphs.has_value());
  set_training_argument(a, "step_graphs", "false", "--step_graphs");
  EXPECT_EQ(a.step_graphs, false);
  EXPECT_EQ(TrainingArguments::from_json(a.to_json()).step_graphs, false);
  set_training_argument(a, "step_graphs", "none", "--step_graphs");
  EXPECT_FALSE(a.step_graphs.has_value());
  const std::string bad = value_error([] { TrainingArguments::from_json(json{{"step_graphs", "on"}}, "cfg.json"); });
  EXPECT_EQ(bad, "[trainer] cfg.json: field 'step_graphs': expected true or false, got \"on\"");
}

// The field's former name, cuda_graphs, is still read (files and checkpoints
// written before the rename), and messages name the key the file used; only
// the new name is written.
TEST(TrainingArguments, CudaGraphsIsReadAsStepGraphs) {
  TrainingArguments a = TrainingArguments::from_json(json{{"cuda_graphs", true}}, "cfg.json");
  EXPECT_EQ(a.step_graphs, true);
  EXPECT_EQ(a.to_json()["step_graphs"], true);
  EXPECT_FALSE(a.to_json().contains("cuda_graphs"));
  set_training_argument(a, "cuda_graphs", "false", "--cuda_graphs");
  EXPECT_EQ(a.step_graphs, false);
  EXPECT_EQ(find_training_argument_field("cuda_graphs"), find_training_argument_field("step_graphs"));
  const std::string bad = value_error([] { TrainingArguments::from_json(json{{"cuda_graphs", "on"}}, "cfg.json"); });
  EXPECT_EQ(bad, "[trainer] cfg.json: field 'cuda_graphs': expected true or false, got \"on\"");
}

TEST(TrainingArguments, FieldsNotSetKeepTheBase) {
  TrainingArguments base;
  base.learning_rate = 1e-3;
  base.seed = 1;
  TrainingArguments a = TrainingArguments::from_json(json{{"seed", 5}}, "cfg.json", base);
  EXPECT_DOUBLE_EQ(a.learning_rate, 1e-3);
  EXPECT_EQ(a.seed, 5);
}

TEST(TrainingArguments, BadValuesNameTheFileTheFieldAndWhatIsAllowed) {
  auto from = [](json j) { return value_error([&] { TrainingArguments::from_json(j, "cfg.json"); }); };
  EXPECT_EQ(from({{"learning_rate", -1}}),
            "[trainer] cfg.json: field 'learning_rate': expected a number in [0, 1000], got -1");
  // 1e308 was accepted and overflowed the first update.
  EXPECT_EQ(from({{"learning_rate", 1e308}}),
            "[trainer] cfg.json: field 'learning_rate': expected a number in [0, 1000], got 1e+308");
  EXPECT_EQ(from({{"per_device_train_batch_size", 0}}),
            "[trainer] cfg.json: field 'per_device_train_batch_size': expected an integer >= 1, got 0");
  EXPECT_EQ(from({{"per_device_train_batch_size", 2.5}}),
            "[trainer] cfg.json: field 'per_device_train_batch_size': expected an integer >= 1, got 2.5");
  EXPECT_EQ(from({{"adam_beta1", 1.0}}),
            "[trainer] cfg.json: field 'adam_beta1': expected a number in [0, 1), got 1.0");
  EXPECT_EQ(from({{"eval_strategy", "sometimes"}}),
            "[trainer] cfg.json: field 'eval_strategy': expected one of \"no\", \"steps\" or \"epoch\", got "
            "\"sometimes\"");
  EXPECT_EQ(from({{"use_cpu", "yes"}}), "[trainer] cfg.json: field 'use_cpu': expected true or false, got \"yes\"");
  EXPECT_EQ(from({{"output_dir", ""}}),
            "[trainer] cfg.json: field 'output_dir': expected a non-empty string, got \"\"");
  EXPECT_NE(from({{"report_to", "tensorbord"}})
                .find("field 'report_to': expected one of \"all\", \"jsonl\", \"tensorboard\" or \"none\""),
            std::string::npos);
  EXPECT_NE(from({{"lr_scheduler_type", "exponential"}}).find("\"cosine\""), std::string::npos);
}

TEST(TrainingArguments, NumbersBeyondTheirRangeAreRefused) {
  auto from = [](json j) { return value_error([&] { TrainingArguments::from_json(j, "cfg.json"); }); };
  EXPECT_EQ(from({{"gradient_accumulation_steps", 4611686018427387905}}),
            "[trainer] cfg.json: field 'gradient_accumulation_steps': expected an integer in [1, 16777216], got "
            "4611686018427387905");
  EXPECT_EQ(from({{"num_train_epochs", 1e19}}),
            "[trainer] cfg.json: field 'num_train_epochs': expected a number in [0, 1e+06], got 1e+19");
  EXPECT_NE(from({{"max_steps", 1000000000000000}}).find("field 'max_steps': expected an integer in [-1, "),
            std::string::npos);
  TrainingArguments a;
  const std::string workers = std::to_string(data::max_num_workers() + 1);
  EXPECT_EQ(
      value_error([&] { set_training_argument(a, "dataloader_num_workers", "600000", "--dataloader_num_workers"); }),
      "[trainer] --dataloader_num_workers: expected an integer in [0, " + std::to_string(data::max_num_workers()) +
          "], got 600000");
  EXPECT_NE(
      value_error([&] { set_training_argument(a, "dataloader_num_workers", workers, "--dataloader_num_workers"); }),
      "");
}

TEST(TrainingArguments, UnknownKeysAreRejectedWithASuggestion) {
  std::string msg = value_error([] { TrainingArguments::from_json(json{{"learning_rat", 0.1}}, "cfg.json"); });
  EXPECT_EQ(msg,
            "[trainer] cfg.json: field 'learning_rat': expected a TrainingArguments name (did you mean "
            "'learning_rate'?), got an unknown field");
  msg = value_error([] { TrainingArguments::from_json(json{{"zzzzzzzz", 1}}, "cfg.json"); });
  EXPECT_EQ(msg.find("did you mean"), std::string::npos);
  EXPECT_NE(value_error([] { TrainingArguments::from_json(json::array(), "cfg.json"); }).find("JSON object"),
            std::string::npos);
}

TEST(TrainingArguments, OptionalFieldsTakeNull) {
  TrainingArguments a = TrainingArguments::from_json(
      json{{"eval_steps", nullptr}, {"save_total_limit", 3}, {"greater_is_better", nullptr}}, "cfg.json");
  EXPECT_FALSE(a.eval_steps.has_value());
  EXPECT_EQ(a.save_total_limit, 3);
  EXPECT_FALSE(a.greater_is_better.has_value());
}

TEST(TrainingArguments, ReportToTakesAStringOrAList) {
  TrainingArguments a = TrainingArguments::from_json(json{{"report_to", "none"}}, "c");
  EXPECT_FALSE(a.writes_jsonl());
  a = TrainingArguments::from_json(json{{"report_to", json::array({"jsonl"})}}, "c");
  EXPECT_TRUE(a.writes_jsonl());
  a.report_to = {"jsonl", "none"};
  EXPECT_NE(value_error([&] { a.validate("c"); }).find("\"none\" cannot be combined"), std::string::npos);
}

TEST(TrainingArguments, CommandLineTextIsParsedByTheFieldsKind) {
  TrainingArguments a;
  set_training_argument(a, "learning_rate", "1e-3", "--learning_rate");
  set_training_argument(a, "seed", "7", "--seed");
  set_training_argument(a, "use_cpu", "true", "--use_cpu");
  set_training_argument(a, "disable_tqdm", "1", "--disable_tqdm");
  set_training_argument(a, "save_total_limit", "2", "--save_total_limit");
  set_training_argument(a, "report_to", "jsonl", "--report_to");
  EXPECT_DOUBLE_EQ(a.learning_rate, 1e-3);
  EXPECT_EQ(a.seed, 7);
  EXPECT_TRUE(a.use_cpu);
  EXPECT_TRUE(a.disable_tqdm);
  EXPECT_EQ(a.save_total_limit, 2);
  set_training_argument(a, "save_total_limit", "none", "--save_total_limit");
  EXPECT_FALSE(a.save_total_limit.has_value());
  set_training_argument(a, "use_cpu", "off", "--use_cpu");
  EXPECT_FALSE(a.use_cpu);

  EXPECT_EQ(value_error([&] { set_training_argument(a, "seed", "seven", "--seed"); }),
            "[trainer] --seed: expected an integer >= 0, got \"seven\"");
  EXPECT_EQ(value_error([&] { set_training_argument(a, "learning_rate", "fast", "--learning_rate"); }),
            "[trainer] --learning_rate: expected a number in [0, 1000], got \"fast\"");
  EXPECT_EQ(value_error([&] { set_training_argument(a, "use_cpu", "maybe", "--use_cpu"); }),
            "[trainer] --use_cpu: expected true or false, got \"maybe\"");
  EXPECT_NE(value_error([&] { set_training_argument(a, "sed", "1", "--sed"); }).find("did you mean 'seed'"),
            std::string::npos);
}

TEST(TrainingArguments, PrecisionTakesLightningsSpellingsAndHuggingFacesFlags) {
  auto precision_of = [](const std::string& text) {
    TrainingArguments a;
    set_training_argument(a, "precision", text, "--precision");
    return a.precision;
  };
  EXPECT_EQ(precision_of("fp32"), "fp32");
  EXPECT_EQ(precision_of("32-true"), "fp32");
  EXPECT_EQ(precision_of("32"), "fp32");
  EXPECT_EQ(precision_of("bf16-mixed"), "bf16-mixed");
  EXPECT_EQ(precision_of("bf16"), "bf16-mixed");
  EXPECT_EQ(precision_of("fp16-mixed"), "fp16-mixed");
  EXPECT_EQ(precision_of("16-mixed"), "fp16-mixed");
  EXPECT_EQ(precision_of("16"), "fp16-mixed");
  EXPECT_NE(value_error([&] {
              precision_of("64");
            }).find("[trainer] --precision: expected one of \"fp32\", \"bf16-mixed\", \"fp16-mixed\""),
            std::string::npos);

  TrainingArguments a;
  EXPECT_FALSE(a.autocast_dtype().has_value());
  EXPECT_FALSE(a.uses_grad_scaler());
  set_training_argument(a, "bf16", "true", "--bf16");
  EXPECT_EQ(a.precision, "bf16-mixed");
  EXPECT_EQ(a.autocast_dtype(), DType::bfloat16);
  EXPECT_FALSE(a.uses_grad_scaler());
  set_training_argument(a, "bf16", "false", "--bf16");
  EXPECT_EQ(a.precision, "fp32");
  set_training_argument(a, "fp16", "true", "--fp16");
  EXPECT_EQ(a.precision, "fp16-mixed");
  EXPECT_EQ(a.autocast_dtype(), DType::float16);
  EXPECT_TRUE(a.uses_grad_scaler());
  // fp16 false leaves a bf16 precision alone; precision overrides either flag.
  set_training_argument(a, "precision", "bf16-mixed", "--precision");
  set_training_argument(a, "fp16", "false", "--fp16");
  EXPECT_EQ(a.precision, "bf16-mixed");

  // The JSON carries all three, consistently, and reads back the same.
  json j = a.to_json();
  EXPECT_EQ(j["bf16"], true);
  EXPECT_EQ(j["fp16"], false);
  EXPECT_EQ(j["precision"], "bf16-mixed");
  EXPECT_EQ(TrainingArguments::from_json(j).precision, "bf16-mixed");
  // A Hugging Face config with only the flag.
  EXPECT_EQ(TrainingArguments::from_json(json{{"fp16", true}}).precision, "fp16-mixed");
  EXPECT_EQ(TrainingArguments::from_json(json{{"precision", "16-mixed"}}).to_json()["fp16"], true);
}

TEST(TrainingArguments, Bf16AndFp16TogetherAreRefused) {
  EXPECT_NE(value_error([] {
              TrainingArguments::from_json(json{{"bf16", true}, {"fp16", true}}, "cfg.json");
            }).find("[trainer] cfg.json: field 'fp16': expected at most one of bf16 and fp16 to be true"),
            std::string::npos);
  TrainingArguments a;
  set_training_argument(a, "fp16", "true", "--fp16");
  EXPECT_NE(
      value_error([&] { set_training_argument(a, "bf16", "true", "--bf16"); }).find("precision is already fp16-mixed"),
      std::string::npos);
}

TEST(TrainingArguments, ValidateChecksCombinations) {
  TrainingArguments a;
  a.load_best_model_at_end = true;
  EXPECT_NE(value_error([&] { a.validate("cfg"); }).find("eval_strategy is \"no\""), std::string::npos);
  a.eval_strategy = "epoch";
  EXPECT_NE(value_error([&] { a.validate("cfg"); }).find("save_strategy to match eval_strategy"), std::string::npos);
  a.save_strategy = "epoch";
  EXPECT_NO_THROW(a.validate("cfg"));
  a.eval_strategy = a.save_strategy = "steps";
  a.eval_steps = 30;
  a.save_steps = 100;
  EXPECT_NE(value_error([&] { a.validate("cfg"); }).find("multiple of eval_steps"), std::string::npos);
  a.save_steps = 90;
  EXPECT_NO_THROW(a.validate("cfg"));

  TrainingArguments b;
  b.num_train_epochs = 0;
  EXPECT_NE(value_error([&] { b.validate("cfg"); }).find("nothing to train"), std::string::npos);
  b.max_steps = 10;
  EXPECT_NO_THROW(b.validate("cfg"));
}

// Hugging Face's dataloader_prefetch_factor: batches each worker builds
// ahead, from 1 to 64, and only with workers (its own check, message aside).
TEST(TrainingArguments, PrefetchFactorIsAWorkersDepthAndNeedsWorkers) {
  TrainingArguments a;
  EXPECT_FALSE(a.dataloader_prefetch_factor.has_value());
  set_training_argument(a, "dataloader_prefetch_factor", "4", "--dataloader_prefetch_factor");
  EXPECT_EQ(a.dataloader_prefetch_factor, 4);
  EXPECT_EQ(value_error([&] { a.validate("cfg"); }),
            "[trainer] cfg: dataloader_prefetch_factor is 4 but dataloader_num_workers is 0, and batches are built "
            "ahead only by loader workers; set dataloader_num_workers to 1 or more, or leave "
            "dataloader_prefetch_factor unset");
  a.dataloader_num_workers = 2;
  EXPECT_NO_THROW(a.validate("cfg"));
  EXPECT_EQ(TrainingArguments::from_json(a.to_json()).dataloader_prefetch_factor, 4);
  auto refused = [&](const char* text) {
    return value_error(
        [&] { set_training_argument(a, "dataloader_prefetch_factor", text, "--dataloader_prefetch_factor"); });
  };
  EXPECT_EQ(refused("0"), "[trainer] --dataloader_prefetch_factor: expected an integer >= 1, got 0");
  EXPECT_EQ(refused("65"), "[trainer] --dataloader_prefetch_factor: expected an integer in [1, 64], got 65");
}

TEST(TrainingArguments, SavesAndLoadsFiles) {
  TempDir dir;
  TrainingArguments a;
  a.seed = 3;
  a.lr_scheduler_type = "cosine";
  a.save(dir.file("training_args.json"));
  TrainingArguments b = TrainingArguments::load(dir.file("training_args.json"));
  EXPECT_EQ(b.to_json(), a.to_json());

  std::string bad = dir.write("bad.json", "{\"seed\": ");
  EXPECT_NE(value_error([&] { TrainingArguments::load(bad); }).find("not valid JSON"), std::string::npos);
  EXPECT_THROW(TrainingArguments::load(dir.file("missing.json")), IoError);
  std::string combo = dir.write("combo.json", R"({"load_best_model_at_end": true})");
  EXPECT_NE(value_error([&] { TrainingArguments::load(combo); }).find(combo + ": load_best_model_at_end"),
            std::string::npos);
}

}  // namespace
}  // namespace hearth::train
