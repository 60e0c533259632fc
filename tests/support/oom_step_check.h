// The check behind "an OutOfMemoryError in the middle of a training step
// leaves model, optimizer and checkpoints consistent", shared by the CPU unit
// test and the GPU test: the failure is injected into the allocator after N
// allocations, for N across more than a whole step, and after each failure
//   - the model, optimizer state and RNG equal a checkpoint of the same step
//     (the step either completed or it is as if it never started),
//   - no gradient is left over, and only complete checkpoints are on disk,
//   - the run resumes from its newest checkpoint to the end.
// On the CPU, runs are deterministic, so states also equal those of a run
// that never failed, bit for bit.
#pragma once

#include <filesystem>
#include <fstream>
#include <string>

#include <gtest/gtest.h>

#include "hearth/core/errors.h"
#include "hearth/core/generator.h"
#include "hearth/core/oom_injection.h"
#include "hearth/io/safetensors.h"
#include "hearth/train/checkpoint.h"
#include "hearth/train/trainer.h"
#include "tests/support/temp_dir.h"
#include "tests/unit/train/train_testing.h"

namespace hearth::train::testing {

inline std::string read_file_bytes(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

inline TrainingArguments oom_args(const std::string& dir, const std::string& device) {
  TrainingArguments args = toy_args(dir);
  args.use_cpu = device == "cpu";
  args.device = device;
  args.max_steps = 4;
  args.save_strategy = "steps";
  args.save_steps = 1;
  args.max_grad_norm = 1.0;  // clipping allocates too
  args.weight_decay = 0.01;  // two parameter groups
  // The sweep counts the allocations of eager steps; a replayed step graph
  // allocates nothing, so it would leave too few failure points inside a step.
  args.step_graphs = false;
  return args;
}

// Arms the injected failure once the checkpoint of `step` is saved.
class ArmOomAfterSave : public TrainerCallback {
 public:
  ArmOomAfterSave(int64_t step, int64_t allocations) : step_(step), allocations_(allocations) {}
  std::string name() const override { return "ArmOomAfterSave"; }
  void on_save(const TrainingArguments&, TrainerState& state, TrainerControl&, const std::string&) override {
    if (state.global_step == step_) inject_oom_after_allocations(allocations_);
  }

 private:
  int64_t step_, allocations_;
};

struct DisarmOom {
  ~DisarmOom() { inject_oom_after_allocations(-1); }
};

// The live model, optimizer state and RNG of `t` against the files of `checkpoint`.
inline void expect_state_equals_checkpoint(Trainer& t, const std::string& checkpoint) {
  SCOPED_TRACE("compared with " + checkpoint);
  auto weights = io::load_safetensors(checkpoint + "/" + kModelFile);
  for (const auto& [name, value] : t.model().state_dict()) {
    ASSERT_TRUE(weights.count(name)) << name;
    EXPECT_EQ(value.cpu().to_vector<float>(), weights.at(name).to_vector<float>()) << "parameter " << name;
  }
  optim::OptimizerStateDict live = t.optimizer()->state_dict();
  io::SafetensorsFile saved(checkpoint + "/" + kOptimizerFile);
  EXPECT_EQ(live.tensors.size(), saved.names().size());
  for (const auto& [name, value] : live.tensors) {
    ASSERT_TRUE(saved.contains(name)) << "optimizer " << name;
    EXPECT_EQ(value.cpu().to_vector<float>(), saved.get(name).to_vector<float>()) << "optimizer " << name;
  }
  nlohmann::json meta = nlohmann::json::parse(saved.metadata().at("optimizer"));
  EXPECT_EQ(live.meta["state"], meta["state"]) << "step counts";
  for (const Tensor& p : t.model().parameters()) EXPECT_FALSE(p.grad().defined()) << "a stale gradient";
  // Dropout's random numbers: a step that did not happen drew none.
  nlohmann::json state = read_trainer_state(checkpoint);
  EXPECT_EQ(default_generator().offset(),
            state["stateful_callbacks"][train::TrainerState::kResumeStateKey]["rng_state"]["offset"].get<uint64_t>())
      << "RNG";
}

// Runs the sweep on `device` ("cpu", "cuda:0"): failure points 0, stride, 2 *
// stride, ... below `limit` allocations after the checkpoint of step 2.
inline void check_oom_anywhere_in_a_step(const std::string& device, int64_t stride, int64_t limit) {
  const bool deterministic = device == "cpu";
  hearth::testing::TempDir dir;
  auto data = toy_dataset(40);
  const std::string reference = dir.file("reference");
  Trainer ref(toy_model(), oom_args(reference, device), data, nullptr, {}, quiet());
  ref.train();

  int inside_step = 0, after_step = 0;
  for (int64_t n = 0; n < limit; n += stride) {
    DisarmOom disarm;
    const std::string run = dir.file("run-" + std::to_string(n));
    Trainer t(toy_model(), oom_args(run, device), data, nullptr, {std::make_shared<ArmOomAfterSave>(2, n)}, quiet());
    try {
      t.train();
      continue;  // n outlasted the run
    } catch (const OutOfMemoryError&) {
    }
    const int64_t step = t.state().global_step;
    SCOPED_TRACE("failure after " + std::to_string(n) + " allocations, at step " + std::to_string(step));
    ASSERT_GE(step, 2);
    (step == 2 ? inside_step : after_step) += 1;
    const std::string own = run + "/" + checkpoint_name(step);
    if (std::filesystem::exists(own)) expect_state_equals_checkpoint(t, own);
    if (deterministic) expect_state_equals_checkpoint(t, reference + "/" + checkpoint_name(step));
    for (const auto& e : std::filesystem::directory_iterator(run))
      EXPECT_EQ(e.path().filename().string().find(".tmp"), std::string::npos) << "left behind: " << e.path();
    if (deterministic) {
      for (const auto& [s, ckpt] : list_checkpoints(run))
        EXPECT_EQ(read_file_bytes(ckpt + "/" + kModelFile),
                  read_file_bytes(reference + "/" + checkpoint_name(s) + "/" + kModelFile));
    }

    inject_oom_after_allocations(-1);
    TrainingArguments resume = oom_args(run, device);
    resume.resume_from_checkpoint = "latest";
    Trainer resumed(toy_model(), resume, data, nullptr, {}, quiet());
    resumed.train();
    EXPECT_EQ(resumed.state().global_step, 4);
    if (deterministic) {
      EXPECT_EQ(read_file_bytes(run + "/checkpoint-4/" + kModelFile),
                read_file_bytes(reference + "/checkpoint-4/" + kModelFile));
    }
    std::filesystem::remove_all(run);
  }
  // The sweep must have hit both kinds of failure point, or it tested nothing.
  EXPECT_GT(inside_step, 3);
  EXPECT_GT(after_step, 0);
}

}  // namespace hearth::train::testing
