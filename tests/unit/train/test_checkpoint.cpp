#include <filesystem>
#include <functional>
#include <map>
#include <stdexcept>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "hearth/core/errors.h"
#include "hearth/io/atomic_file.h"
#include "hearth/io/safetensors.h"
#include "hearth/nn/linear.h"
#include "hearth/optim/adam.h"
#include "hearth/train/checkpoint.h"
#include "tests/support/temp_dir.h"
#include "tests/unit/train/train_testing.h"

namespace hearth::train {
namespace {

namespace fs = std::filesystem;
using hearth::testing::TempDir;
using testing::toy_model;

void expect_same_state(const nn::Module& a, const nn::Module& b) {
  nn::StateDict sa = a.state_dict(), sb = b.state_dict();
  ASSERT_EQ(sa.size(), sb.size());
  for (const auto& [k, t] : sa) EXPECT_EQ(t.to_vector<float>(), sb.at(k).to_vector<float>()) << k;
}

TEST(Checkpoint, SavesTheHuggingFaceLayoutAndLoadsItBack) {
  TempDir dir;
  auto model = toy_model(1);
  optim::AdamW opt(model->parameters(), {.lr = 0.1});
  auto sched = optim::get_linear_schedule_with_warmup(opt, 1, 10);
  for (Tensor& p : model->parameters()) p.set_grad(ones(p.shape()));
  opt.step();
  sched->step();
  TrainingArguments args;
  args.seed = 9;
  args.resume_from_checkpoint = "latest";
  CheckpointContents c;
  c.model = model.get();
  c.optimizer = &opt;
  c.scheduler = sched.get();
  c.trainer_state = {{"global_step", 1}};
  c.args = &args;
  c.extra_files = [](const std::string& d) { hearth::io::write_file_atomic(d + "/config.json", "{}"); };
  std::string ckpt = dir.file(checkpoint_name(1));
  save_checkpoint(ckpt, c);

  std::vector<std::string> files;
  for (const auto& e : fs::directory_iterator(ckpt)) files.push_back(e.path().filename().string());
  std::sort(files.begin(), files.end());
  EXPECT_EQ(files, (std::vector<std::string>{"config.json", "model.safetensors", "optimizer.safetensors",
                                             "trainer_state.json", "training_args.json"}));
  EXPECT_EQ(read_trainer_state(ckpt)["global_step"], 1);
  EXPECT_EQ(TrainingArguments::load(ckpt + "/training_args.json").seed, 9);
  EXPECT_FALSE(TrainingArguments::load(ckpt + "/training_args.json").resume_from_checkpoint.has_value())
      << "a reused training_args.json must not resume the run it came from";

  auto other = toy_model(2);
  optim::AdamW opt2(other->parameters(), {.lr = 0.1});
  auto sched2 = optim::get_linear_schedule_with_warmup(opt2, 1, 10);
  load_model_weights(ckpt, *other);
  load_optimizer_state(ckpt, opt2, sched2.get());
  expect_same_state(*model, *other);
  EXPECT_EQ(sched2->last_epoch(), 1);
  EXPECT_EQ(opt2.param_groups()[0].lr(), opt.param_groups()[0].lr());
  EXPECT_EQ(opt2.state(other->parameters()[0])->step, 1);
}

// A checkpoint whose optimizer.safetensors metadata entry `key` is edited by `edit`.
using Edit = std::function<void(nlohmann::json&, std::map<std::string, Tensor>&)>;

std::string checkpoint_with_edited_metadata(TempDir& dir, const std::string& key, const Edit& edit) {
  auto model = toy_model(1);
  optim::AdamW opt(model->parameters(), {.lr = 0.1});
  auto sched = optim::get_linear_schedule_with_warmup(opt, 1, 10);
  for (Tensor& p : model->parameters()) p.set_grad(ones(p.shape()));
  opt.step();
  sched->step();
  TrainingArguments args;
  CheckpointContents c;
  c.model = model.get();
  c.optimizer = &opt;
  c.scheduler = sched.get();
  c.trainer_state = {{"global_step", 1}};
  c.args = &args;
  const std::string ckpt = dir.file(checkpoint_name(1));
  save_checkpoint(ckpt, c);
  const std::string path = ckpt + "/optimizer.safetensors";
  std::map<std::string, std::string> metadata;
  std::map<std::string, Tensor> tensors;
  {
    io::SafetensorsFile file(path);
    metadata = file.metadata();
    for (const std::string& name : file.names()) tensors[name] = file.get(name).clone();
  }
  nlohmann::json j = nlohmann::json::parse(metadata.at(key));
  edit(j, tensors);
  metadata[key] = j.dump();
  io::save_safetensors(path, tensors, metadata);
  return ckpt;
}

TEST(Checkpoint, OptimizerMetadataOfTheWrongTypeIsAnErrorNamingTheFile) {
  struct Case {
    const char* key;
    Edit edit;
    const char* expected;
  };
  using Tensors = std::map<std::string, Tensor>;
  const std::vector<Case> cases = {
      {"scheduler", [](nlohmann::json& j, Tensors&) { j["base_lrs"] = "fast"; },
       "field \"base_lrs\": expected an array"},
      {"scheduler", [](nlohmann::json& j, Tensors&) { j["base_lrs"] = {"a"}; },
       "field \"base_lrs\": expected an array"},
      {"scheduler", [](nlohmann::json& j, Tensors&) { j["last_epoch"] = 1e18; }, "field \"last_epoch\""},
      {"scheduler", [](nlohmann::json& j, Tensors&) { j["last_epoch"] = 1000000000000000000; }, "field \"last_epoch\""},
      {"optimizer", [](nlohmann::json& j, Tensors&) { j["state"]["0"]["step"] = "one"; }, "field \"state.0.step\""},
      {"optimizer", [](nlohmann::json& j, Tensors&) { j["state"]["0"]["step"] = 1e30; }, "field \"state.0.step\""},
      // Corruptions that were accepted silently.
      {"optimizer", [](nlohmann::json& j, Tensors&) { j["state"]["0"]["step"] = 0; },
       "field \"state.0.step\": expected an integer >= 1"},
      {"optimizer", [](nlohmann::json&, Tensors& t) { t.erase("state.0.exp_avg"); },
       "the tensor \"state.0.exp_avg\" is missing"},
      {"optimizer",
       [](nlohmann::json&, Tensors& t) {
         Tensor& f = t.at("state.0.exp_avg");
         f = zeros(f.shape(), DType::int32);
       },
       "\"state.0.exp_avg\" is int32 but parameter 0 is float32"},
  };
  for (const Case& c : cases) {
    TempDir dir;
    const std::string ckpt = checkpoint_with_edited_metadata(dir, c.key, c.edit);
    auto model = toy_model(2);
    optim::AdamW opt(model->parameters(), {.lr = 0.1});
    auto sched = optim::get_linear_schedule_with_warmup(opt, 1, 10);
    try {
      load_optimizer_state(ckpt, opt, sched.get());
      ADD_FAILURE() << "accepted: " << c.expected;
    } catch (const ValueError& e) {
      EXPECT_NE(std::string(e.what()).find("[checkpoint] " + ckpt + "/optimizer.safetensors: "), std::string::npos)
          << e.what();
      EXPECT_NE(std::string(e.what()).find(c.expected), std::string::npos) << e.what();
    }
  }
}

TEST(Checkpoint, ModelWeightsOfAnotherDTypeAreAnErrorNamingTheFile) {
  TempDir dir;
  const std::string ckpt = checkpoint_with_edited_metadata(dir, "optimizer", [](nlohmann::json&, auto&) {});
  const std::string path = ckpt + "/model.safetensors";
  std::map<std::string, Tensor> weights = io::load_safetensors(path);
  const std::string first = weights.begin()->first;
  weights[first] = zeros(weights[first].shape(), DType::int32);
  io::save_safetensors(path, weights);
  auto model = toy_model(2);
  try {
    load_model_weights(ckpt, *model);
    FAIL() << "int32 weights were accepted";
  } catch (const ValueError& e) {
    EXPECT_NE(std::string(e.what()).find("[checkpoint] " + path + ": [load_state_dict] dtype mismatch for \"" + first +
                                         "\": the state holds int32"),
              std::string::npos)
        << e.what();
  }
}

TEST(Checkpoint, ASaveThatThrowsMidwayLeavesNoCheckpoint) {
  TempDir dir;
  auto model = toy_model();
  CheckpointContents c;
  c.model = model.get();
  c.trainer_state = {{"global_step", 3}};
  c.extra_files = [](const std::string& d) {
    ASSERT_TRUE(fs::exists(d + "/model.safetensors"));  // half written
    throw std::runtime_error("disk full");
  };
  EXPECT_THROW(save_checkpoint(dir.file("checkpoint-3"), c), std::runtime_error);
  EXPECT_TRUE(dir.entries().empty()) << "left behind: " << (dir.entries().empty() ? "" : dir.entries()[0]);
  EXPECT_TRUE(list_checkpoints(dir.path()).empty());
  EXPECT_FALSE(latest_checkpoint(dir.path()).has_value());
}

TEST(Checkpoint, ListsOnlyCompleteCheckpointDirectoriesByStep) {
  TempDir dir;
  for (const char* d : {"checkpoint-10", "checkpoint-9", "checkpoint-100", "checkpoint-5.tmp-abc123", "checkpoint-",
                        "checkpoint-x", "runs"})
    fs::create_directories(dir.file(d));
  dir.write("checkpoint-7", "a file, not a directory");
  auto all = list_checkpoints(dir.path());
  ASSERT_EQ(all.size(), 3u);
  EXPECT_EQ(all[0].first, 9);
  EXPECT_EQ(all[1].first, 10);
  EXPECT_EQ(all[2].first, 100);
  EXPECT_EQ(latest_checkpoint(dir.path()), dir.file("checkpoint-100"));
  EXPECT_TRUE(list_checkpoints(dir.file("does-not-exist")).empty());
}

TEST(Checkpoint, RotationKeepsTheNewestAndNeverTheBest) {
  TempDir dir;
  for (int s : {1, 2, 3, 4, 5}) fs::create_directories(dir.file(checkpoint_name(s)));
  auto deleted = rotate_checkpoints(dir.path(), 2, dir.file("checkpoint-2"));
  EXPECT_EQ(deleted,
            (std::vector<std::string>{dir.file("checkpoint-1"), dir.file("checkpoint-3"), dir.file("checkpoint-4")}));
  EXPECT_EQ(dir.entries(), (std::vector<std::string>{"checkpoint-2", "checkpoint-5"}));

  fs::create_directories(dir.file("checkpoint-6"));
  // Limit 1 with an older best keeps two: the best, and the newest to resume from.
  rotate_checkpoints(dir.path(), 1, dir.file("checkpoint-2"));
  EXPECT_EQ(dir.entries(), (std::vector<std::string>{"checkpoint-2", "checkpoint-6"}));
  rotate_checkpoints(dir.path(), 1, "");
  EXPECT_EQ(dir.entries(), (std::vector<std::string>{"checkpoint-6"}));
  EXPECT_TRUE(rotate_checkpoints(dir.path(), 0, "").empty());
}

TEST(Checkpoint, ResolvesLatestAndRejectsIncompleteDirectories) {
  TempDir dir;
  EXPECT_THROW(resolve_checkpoint("latest", dir.path()), ValueError);
  auto model = toy_model();
  optim::AdamW opt(model->parameters());
  CheckpointContents c;
  c.model = model.get();
  c.optimizer = &opt;
  c.trainer_state = {{"global_step", 4}};
  save_checkpoint(dir.file("checkpoint-4"), c);
  EXPECT_EQ(resolve_checkpoint("latest", dir.path()), dir.file("checkpoint-4"));
  EXPECT_EQ(resolve_checkpoint(dir.file("checkpoint-4"), "elsewhere"), dir.file("checkpoint-4"));
  fs::create_directories(dir.file("half"));
  try {
    resolve_checkpoint(dir.file("half"), dir.path());
    FAIL();
  } catch (const ValueError& e) {
    EXPECT_NE(std::string(e.what()).find("is not a complete checkpoint: model.safetensors is missing"),
              std::string::npos);
  }
  EXPECT_THROW(resolve_checkpoint(dir.file("nowhere"), dir.path()), ValueError);
  EXPECT_THROW(load_model_weights(dir.file("half"), *model), IoError);
}

// Resuming another model's checkpoint names that model (from its folder's
// config.json, or cv_example's classes.json) instead of listing every key.
TEST(Checkpoint, AnotherModelsWeightsAreNamedAsSuch) {
  TempDir dir;
  nn::Linear other(4, 3);
  std::map<std::string, Tensor> weights;
  for (const auto& [name, t] : other.state_dict()) weights["fc." + name] = t;
  io::save_safetensors(dir.file(kModelFile), weights);
  auto model = toy_model();
  auto message = [&] {
    try {
      load_model_weights(dir.path(), *model);
    } catch (const ValueError& e) {
      return std::string(e.what());
    }
    return std::string();
  };
  EXPECT_NE(message().find("the checkpoint holds another model: 2 of its 2 weights (fc.bias, ...)"), std::string::npos)
      << message();
  dir.write("classes.json", "[\"cat\", \"dog\"]");
  EXPECT_NE(message().find("holds a cv_example model (classes.json)"), std::string::npos) << message();
  dir.write("config.json", R"({"model_type": "bert"})");
  EXPECT_NE(message().find("holds a bert model (config.json model_type)"), std::string::npos) << message();
}

}  // namespace
}  // namespace hearth::train
