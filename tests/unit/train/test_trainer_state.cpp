#include <filesystem>
#include <fstream>
#include <set>
#include <string>

#include <gtest/gtest.h>

#include "hearth/core/errors.h"
#include "hearth/train/trainer_state.h"

namespace hearth::train {
namespace {

using json = nlohmann::json;

TrainerState sample_state() {
  TrainerState s;
  s.global_step = 120;
  s.epoch = 1.5;
  s.max_steps = 160;
  s.rng_seed = 42;
  s.rng_offset = 7;
  s.loss_window = {0.5, 0.25};
  return s;
}

std::string refusal(const json& j) {
  try {
    (void)TrainerState::from_json(j, "ckpt/trainer_state.json");
  } catch (const ValueError& e) {
    return e.what();
  }
  return "";
}

TEST(TrainerState, RoundTripsThroughJson) {
  const TrainerState back = TrainerState::from_json(sample_state().to_json(), "trainer_state.json");
  EXPECT_EQ(back.global_step, 120);
  EXPECT_EQ(back.max_steps, 160);
  EXPECT_DOUBLE_EQ(back.epoch, 1.5);
  EXPECT_EQ(back.rng_seed, 42u);
  EXPECT_EQ(back.loss_window, (std::vector<double>{0.5, 0.25}));
}

// Found by fuzzing: a number no int64 can hold (here written as a float, as
// JSON parsers store integers beyond 2^64) was cast to int64, which is
// undefined behaviour; it must be refused with the field and the file named.
TEST(TrainerState, IntegerFieldsOutOfRangeOrFractionalAreRefused) {
  json j = sample_state().to_json();
  j["max_steps"] = 9.2e19;
  EXPECT_EQ(refusal(j),
            "[trainer] ckpt/trainer_state.json: field 'max_steps': expected an integer (digits only, no fraction or "
            "exponent), got 9.2e+19");
  j = sample_state().to_json();
  j["global_step"] = 2.5;
  EXPECT_NE(refusal(j).find("field 'global_step': expected an integer"), std::string::npos) << refusal(j);
  j = sample_state().to_json();
  j["max_steps"] = json::parse("9223372036854775808");  // 2^63: an integer, one past int64
  EXPECT_NE(refusal(j).find("field 'max_steps': expected an integer"), std::string::npos) << refusal(j);
  j = sample_state().to_json();
  j["stateful_callbacks"][TrainerState::kResumeStateKey]["rng_state"]["seed"] = -1;
  EXPECT_NE(refusal(j).find("rng_state: field 'seed': expected an integer from 0 to 18446744073709551615, got -1"),
            std::string::npos)
      << refusal(j);
}

TEST(TrainerState, CountsBeyondAnyRunAreRefused) {
  json j = sample_state().to_json();
  j["global_step"] = 1000000000000000;  // 10^15
  EXPECT_EQ(refusal(j),
            "[trainer] ckpt/trainer_state.json: field 'global_step': expected an integer from -1 to 1000000000000, "
            "got 1000000000000000");
  j = sample_state().to_json();
  j["epoch"] = 1e19;
  EXPECT_NE(refusal(j).find("field 'epoch': expected a number from 0 to"), std::string::npos) << refusal(j);
  j = sample_state().to_json();
  j["stateful_callbacks"][TrainerState::kResumeStateKey]["data_position"]["batches_yielded"] = 4611686018427387905;
  EXPECT_NE(refusal(j).find("field 'data_position.batches_yielded'"), std::string::npos) << refusal(j);
}

// Values within the counts' range but impossible for the run: an epoch of the
// data far beyond the steps taken, a loss sum that soon overflows.
TEST(TrainerState, FieldsInconsistentWithTheRunAreRefused) {
  json j = sample_state().to_json();
  j["stateful_callbacks"][TrainerState::kResumeStateKey]["data_position"]["epoch"] = 100000000000;  // 1e11, steps 120
  EXPECT_EQ(refusal(j),
            "[trainer] ckpt/trainer_state.json: field 'data_position.epoch': expected at most global_step + 1 (121), "
            "got 100000000000");
  j = sample_state().to_json();
  j["stateful_callbacks"][TrainerState::kResumeStateKey]["total_loss"] = 1e308;
  EXPECT_NE(refusal(j).find("field 'total_loss': expected a finite sum of at most 1e30 per step"), std::string::npos)
      << refusal(j);
  j = sample_state().to_json();
  j["stateful_callbacks"][TrainerState::kResumeStateKey]["total_loss"] = 60.5;
  j["stateful_callbacks"][TrainerState::kResumeStateKey]["data_position"]["epoch"] = 121;
  EXPECT_EQ(refusal(j), "");
}

// transformers' TrainerState.load_from_json is TrainerState(**json): every
// top-level key must be one of its fields (tests/fixtures/hf/trainer_state_fields.txt,
// from transformers' dataclass), and hearth's resumption state lives inside
// stateful_callbacks, which it keeps as a dictionary.
TEST(TrainerState, TopLevelKeysAreHuggingFacesFields) {
  std::ifstream in(std::filesystem::path(HEARTH_FIXTURES_DIR) / "hf" / "trainer_state_fields.txt");
  std::set<std::string> fields;
  for (std::string line; std::getline(in, line);)
    if (!line.empty() && line[0] != '#') fields.insert(line);
  ASSERT_GT(fields.size(), 15u);
  TrainerState s = sample_state();
  s.total_flos = 1.5e12;
  s.run_id = "abc";
  s.stateful_callbacks["EarlyStoppingCallback"] = {{"patience_counter", 1}};
  const json j = s.to_json();
  std::set<std::string> keys;
  for (const auto& [key, value] : j.items()) keys.insert(key);
  EXPECT_EQ(keys, fields);
  EXPECT_EQ(j["total_flos"], 1.5e12);
  EXPECT_TRUE(j["best_global_step"].is_null());  // no best model tracked
  const TrainerState back = TrainerState::from_json(j, "trainer_state.json");
  EXPECT_DOUBLE_EQ(back.total_flos, 1.5e12);
  EXPECT_EQ(back.run_id, "abc");
  EXPECT_EQ(back.rng_offset, 7u);
  EXPECT_EQ(back.loss_window, (std::vector<double>{0.5, 0.25}));
  // The resumption state is not one of the callbacks'.
  EXPECT_EQ(back.stateful_callbacks, json({{"EarlyStoppingCallback", {{"patience_counter", 1}}}}));
}

// Checkpoints written before: the resumption state at the top, no total_flos.
TEST(TrainerState, OlderFilesStillRead) {
  json j = sample_state().to_json();
  json resume = j["stateful_callbacks"][TrainerState::kResumeStateKey];
  j["stateful_callbacks"].erase(TrainerState::kResumeStateKey);
  for (const auto& [key, value] : resume.items()) j[key] = value;
  j.erase("total_flos");
  j["best_global_step"] = 0;
  const TrainerState back = TrainerState::from_json(j, "old/trainer_state.json");
  EXPECT_EQ(back.rng_seed, 42u);
  EXPECT_EQ(back.global_step, 120);
  EXPECT_DOUBLE_EQ(back.total_flos, 0.0);
}

}  // namespace
}  // namespace hearth::train
