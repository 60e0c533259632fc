// Every field of Hugging Face's TrainingArguments is either implemented or
// accepted without effect (with the reason), never an unknown name. The list
// of names is a fixture taken from transformers' source, one name a line, so
// that a newer list is a file to replace, not code to edit.
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "hearth/core/errors.h"
#include "hearth/train/training_arguments.h"

namespace hearth::train {
namespace {

namespace fs = std::filesystem;
using json = nlohmann::json;

const fs::path kSource = HEARTH_SOURCE_DIR;

std::vector<std::string> hugging_face_field_names() {
  std::ifstream in(kSource / "tests/fixtures/hf/training_arguments_fields.txt");
  std::vector<std::string> names;
  std::string line;
  while (std::getline(in, line))
    if (!line.empty() && line[0] != '#') names.push_back(line);
  return names;
}

std::string read_text(const fs::path& p) {
  std::ifstream in(p);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

std::string error_of(const json& j) {
  try {
    TrainingArguments::from_json(j, "cfg.json");
  } catch (const ValueError& e) {
    return e.what();
  }
  return "";
}

TEST(HuggingFaceFields, TheFixtureListsTheFields) {
  const std::vector<std::string> names = hugging_face_field_names();
  ASSERT_GT(names.size(), 100u) << "tests/fixtures/hf/training_arguments_fields.txt is missing or short";
}

TEST(HuggingFaceFields, EveryFieldIsKnownAndTakesItsDefault) {
  const TrainingArguments defaults;
  for (const std::string& name : hugging_face_field_names()) {
    const TrainingArgumentField* f = find_training_argument_field(name);
    ASSERT_NE(f, nullptr) << name << " is not a field of hearth's TrainingArguments";
    // The default value reads back: the field is accepted, not refused.
    EXPECT_EQ(error_of({{name, f->get(defaults)}}), "") << name;
  }
}

TEST(HuggingFaceFields, EveryFieldWithoutEffectIsInTheDocTable) {
  const std::string doc = read_text(kSource / "docs/training_arguments.md");
  ASSERT_FALSE(doc.empty()) << "docs/training_arguments.md is missing";
  for (const TrainingArgumentField& f : training_argument_fields()) {
    if (f.no_effect.empty()) continue;
    EXPECT_NE(doc.find("| `" + f.name + "` |"), std::string::npos)
        << f.name << " has no effect but docs/training_arguments.md has no row for it";
  }
}

TEST(HuggingFaceFields, FieldsWithoutEffectAreKeptAsGiven) {
  TrainingArguments a = TrainingArguments::from_json(
      {{"run_name", "mine"}, {"dataloader_persistent_workers", true}, {"eval_accumulation_steps", 4}}, "cfg.json");
  json j = a.to_json();
  EXPECT_EQ(j["run_name"], "mine");
  EXPECT_EQ(j["dataloader_persistent_workers"], true);
  EXPECT_EQ(j["eval_accumulation_steps"], 4);
  EXPECT_EQ(j["hub_strategy"], "every_save");  // unset: Hugging Face's default
  EXPECT_EQ(TrainingArguments::from_json(j, "again").to_json(), j);
}

TEST(HuggingFaceFields, ValuesThatNeedWhatHearthLacksAreRefusedSayingWhy) {
  EXPECT_NE(error_of({{"push_to_hub", true}}).find("no network access"), std::string::npos);
  EXPECT_NE(error_of({{"deepspeed", "ds.json"}}).find("hearth has no DeepSpeed"), std::string::npos);
  EXPECT_NE(error_of({{"save_safetensors", false}}).find("always saves safetensors"), std::string::npos);
  EXPECT_NE(error_of({{"neftune_noise_alpha", 5.0}}).find("NEFTune"), std::string::npos);
  // Hugging Face's tracker integrations: what hearth writes instead.
  EXPECT_NE(error_of({{"report_to", "wandb"}}).find("\"wandb\" is a tracker integration of Hugging Face's that "
                                                    "hearth does not have"),
            std::string::npos);
  EXPECT_NE(error_of({{"report_to", {"tensorboard", "mlflow"}}}).find("\"mlflow\" is a tracker integration"),
            std::string::npos);
  EXPECT_NE(error_of({{"report_to", "tensorbord"}}).find("expected one of"), std::string::npos);
  EXPECT_EQ(error_of({{"push_to_hub", "yes"}}), "[trainer] cfg.json: field 'push_to_hub': expected true or false, got \"yes\"");
}

TEST(HuggingFaceFields, FormerNamesAndMappings) {
  TrainingArguments a = TrainingArguments::from_json({{"evaluation_strategy", "epoch"}}, "cfg.json");
  EXPECT_EQ(a.eval_strategy, "epoch");
  // transformers 4.x's names, as older documentation writes commands with them.
  a = TrainingArguments::from_json({{"no_cuda", true}}, "cfg.json");
  EXPECT_TRUE(a.use_cpu);
  a = TrainingArguments::from_json({{"use_mps_device", true}}, "cfg.json");
  EXPECT_FALSE(a.use_cpu);
  EXPECT_EQ(a.to_json()["use_mps_device"], true);
  a = TrainingArguments::from_json({{"torch_compile", true}}, "cfg.json");
  EXPECT_EQ(a.step_graphs, std::optional<bool>(true));
  a = TrainingArguments::from_json({{"torch_compile", false}}, "cfg.json");
  EXPECT_EQ(a.step_graphs, std::nullopt);  // false leaves the default
  a = TrainingArguments::from_json({{"tf32", false}}, "cfg.json");
  EXPECT_EQ(a.tf32, std::optional<bool>(false));
  EXPECT_NE(error_of({{"label_smoothing_factor", 1.0}}).find("expected a number in [0, 1)"), std::string::npos);
  EXPECT_NE(error_of({{"logging_strategy", "often"}}).find("expected one of \"no\", \"steps\" or \"epoch\""),
            std::string::npos);
}

TEST(HuggingFaceFields, DefaultsAreHuggingFaces) {
  const json j = TrainingArguments().to_json();
  EXPECT_EQ(j["save_strategy"], "steps");
  EXPECT_EQ(j["save_steps"], 500);
  EXPECT_EQ(j["logging_strategy"], "steps");
  EXPECT_EQ(j["logging_steps"], 500);
  EXPECT_EQ(j["eval_strategy"], "no");
  EXPECT_EQ(j["learning_rate"], 5e-5);
  EXPECT_EQ(j["per_device_train_batch_size"], 8);
  EXPECT_EQ(j["num_train_epochs"], 3.0);
  EXPECT_EQ(j["label_smoothing_factor"], 0.0);
  EXPECT_EQ(j["seed"], 42);
  EXPECT_TRUE(j["data_seed"].is_null());
}

}  // namespace
}  // namespace hearth::train
