// TrainingArguments::step_graphs in the Trainer, without a GPU:
// - on the CPU, which has no step graphs, the run is the eager run and says
//   why once;
// - on "graphdev", a host-memory device whose runtime records a step by
//   keeping it and replays it by running it again, under the CUDA runtime's
//   rules (no copy between host and device inside a step, no tensor made
//   before a step freed in it, none made in it kept after it): the Trainer's
//   recorded step keeps those rules, is replayed, and trains exactly as the
//   eager run does, the smaller last batch of each epoch included; a step
//   that breaks the rules, and arguments that rule recording out, run eagerly
//   with one message naming the reason;
// - evaluation's forward is recorded the same way, kept from one evaluation
//   of a run to the next (so the later ones read the trained weights), and
//   gives the eager evaluation's metrics.
#include <cstdlib>
#include <cstring>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "hearth/core/device_runtime.h"
#include "hearth/core/generator.h"
#include "hearth/dispatch/registry.h"
#include "hearth/nn/nn.h"
#include "hearth/ops/elementwise.h"
#include "hearth/ops/factory.h"
#include "hearth/ops/nn_functional.h"
#include "hearth/train/trainer.h"
#include "tests/support/temp_dir.h"
#include "tests/unit/train/train_testing.h"

namespace hearth::train {
namespace {

using hearth::testing::TempDir;
using testing::LossRecorder;
using testing::toy_args;

// ---- a device with step graphs, for tests ------------------------------------

class ReplayingRuntime final : public DeviceRuntime {
 public:
  bool is_available() const override { return true; }
  int device_count() const override { return 1; }
  std::string device_name(int) const override { return "step-graph test device (host memory)"; }
  int auto_priority() const override { return -1; }  // never chosen by device=auto
  void* allocate(size_t nbytes, int) override {
    void* p = std::malloc(nbytes ? nbytes : 1);
    if (watching_) made_in_step_.insert(p);
    return p;
  }
  void deallocate(void* p, int) override {
    if (watching_ && made_in_step_.erase(p) == 0) ++freed_from_before_;
    std::free(p);
  }
  void copy_from_host(void* d, const void* s, size_t n, int) override {
    if (watching_) ++round_trips_;
    std::memcpy(d, s, n);
  }
  void copy_to_host(void* d, const void* s, size_t n, int) override {
    if (watching_) ++round_trips_;
    std::memcpy(d, s, n);
  }
  void copy_within(void* d, const void* s, size_t n, int) override { std::memcpy(d, s, n); }
  void synchronize(int) override {
    if (watching_) ++round_trips_;
  }

  bool supports_step_graphs() const override { return true; }
  std::string rehearse_step(int, const std::function<void()>& step) override {
    ++rehearsals;
    return run_watched(step);
  }
  std::unique_ptr<StepGraph> capture_step(int, const std::function<void()>& step) override {
    ++captures;
    return std::make_unique<Replay>(*this, step);
  }

  int rehearsals = 0, captures = 0, replays = 0;

 private:
  // Running the step again is what replaying its recorded work does, as long
  // as the step keeps the rules; each replay checks that it does.
  class Replay final : public StepGraph {
   public:
    Replay(ReplayingRuntime& rt, std::function<void()> step) : rt_(rt), step_(std::move(step)) {}
    void replay() override {
      ++rt_.replays;
      const std::string broken = rt_.run_watched(step_);
      EXPECT_EQ(broken, "") << "a replayed step broke the rules of recorded steps";
    }

   private:
    ReplayingRuntime& rt_;
    std::function<void()> step_;
  };

  // Runs `step`; "" if it kept the rules, else which it broke.
  std::string run_watched(const std::function<void()>& step) {
    made_in_step_.clear();
    round_trips_ = freed_from_before_ = 0;
    watching_ = true;
    try {
      step();
    } catch (...) {
      watching_ = false;
      throw;
    }
    watching_ = false;
    std::string why;
    if (round_trips_ > 0) why += "it copies between host and device " + std::to_string(round_trips_) + " time(s); ";
    if (freed_from_before_ > 0) why += "it frees " + std::to_string(freed_from_before_) + " tensor(s) made before it; ";
    if (!made_in_step_.empty()) why += "it keeps " + std::to_string(made_in_step_.size()) + " tensor(s) it made; ";
    return why;
  }

  bool watching_ = false;
  std::set<void*> made_in_step_;
  size_t round_trips_ = 0, freed_from_before_ = 0;
};

ReplayingRuntime& graph_runtime();

// "graphdev": host memory, every CPU kernel, the runtime above.
Device graph_device() {
  static const DeviceKind kind = [] {
    const DeviceKind k = register_device_kind("graphdev");
    register_device_runtime(k, std::make_unique<ReplayingRuntime>());
    for (OpHandle op : all_ops())
      if (op->kernels[kCpu.id].fn)
        register_kernel(op->def.name, k, op->kernels[kCpu.id].fn, op->kernels[kCpu.id].dtypes);
    return k;
  }();
  return Device(kind, 0);
}

ReplayingRuntime& graph_runtime() { return static_cast<ReplayingRuntime&>(device_runtime(graph_device().kind)); }

// ---- the runs ----------------------------------------------------------------

// 52 images in 5 classes: batches of 8 leave a last batch of 4 per epoch.
std::shared_ptr<const data::Dataset> images(int64_t n = 52) {
  manual_seed(21);
  Tensor x = randn({n, 3, 8, 8});
  Tensor y = randint(0, 5, {n});
  return std::make_shared<data::TensorDataset>(
      data::Example::Map{{data::field::kPixelValues, x}, {data::field::kLabels, y}});
}

// Batch norm (running statistics updated in place) and dropout (random
// numbers every step).
std::shared_ptr<nn::Module> small_cnn() {
  manual_seed(5);
  return std::make_shared<nn::Sequential>(
      std::make_shared<nn::Conv2d>(3, 4, 3, 1, 1), std::make_shared<nn::BatchNorm2d>(4), std::make_shared<nn::ReLU>(),
      std::make_shared<nn::Flatten>(), std::make_shared<nn::Dropout>(0.3), std::make_shared<nn::Linear>(4 * 8 * 8, 5));
}

struct TrainingRun {
  std::vector<double> losses;
  std::vector<std::vector<float>> weights;  // parameters and buffers after training
  std::string said;
  StepGraphReport report;
};

TrainingRun train(const std::string& dir, bool graphs, Device device,
                  const std::function<void(TrainingArguments&, TrainerOptions&)>& adjust = {}) {
  TrainingArguments args = toy_args(dir);
  args.use_cpu = device.is_cpu();
  args.device = device.str();
  args.dataloader_pin_memory = false;
  args.step_graphs = graphs;
  std::ostringstream console;
  TrainerOptions options;
  options.console = &console;
  options.progress_bar = false;
  if (adjust) adjust(args, options);
  auto rec = std::make_shared<LossRecorder>();
  auto model = small_cnn();
  Trainer trainer(model, args, images(), nullptr, {rec}, options);
  trainer.train();
  TrainingRun r{rec->losses, {}, console.str(), trainer.step_graph_report()};
  for (const Tensor& p : model->parameters()) r.weights.push_back(p.cpu().to_vector<float>());
  for (const Tensor& b : model->buffers())
    if (is_floating(b.dtype())) r.weights.push_back(b.cpu().to_vector<float>());
  return r;
}

size_t count_of(const std::string& text, const std::string& part) {
  size_t n = 0;
  for (size_t at = text.find(part); at != std::string::npos; at = text.find(part, at + 1)) ++n;
  return n;
}

// ---- on the CPU ----------------------------------------------------------------

TEST(TrainerStepGraphs, OnTheCpuTheRunIsTheEagerRunAndSaysWhyOnce) {
  TempDir dir;
  const TrainingRun eager = train(dir.file("eager"), false, Device());
  const TrainingRun graphs = train(dir.file("graphs"), true, Device());
  ASSERT_EQ(eager.losses.size(), 14u);  // 7 batches per epoch, 2 epochs
  EXPECT_EQ(graphs.losses, eager.losses);
  EXPECT_EQ(graphs.weights, eager.weights);
  EXPECT_EQ(count_of(graphs.said, "step_graphs"), 1u) << graphs.said;
  EXPECT_NE(graphs.said.find("hearth: step_graphs is on, but training runs eagerly: cpu has no step graphs"),
            std::string::npos)
      << graphs.said;
  EXPECT_EQ(count_of(eager.said, "step_graphs"), 0u) << "silent when off";
  EXPECT_EQ(graphs.report.replayed_steps, 0);
  EXPECT_NE(graphs.report.eager_reason.find("cpu has no step graphs"), std::string::npos);
}

// The run with step_graphs left unset (the default), and the eager run beside it.
std::pair<TrainingRun, TrainingRun> default_and_eager(const TempDir& dir, Device device) {
  return {
      train(dir.file("default"), false, device, [](TrainingArguments& a, TrainerOptions&) { a.step_graphs.reset(); }),
      train(dir.file("eager"), false, device)};
}

// By default the CPU, which has no step graphs, trains eagerly without a word.
TEST(TrainerStepGraphs, ByDefaultTheCpuTrainsEagerlyAndSaysNothing) {
  TempDir dir;
  const auto [dflt, eager] = default_and_eager(dir, Device());
  EXPECT_EQ(dflt.losses, eager.losses);
  EXPECT_EQ(dflt.weights, eager.weights);
  EXPECT_EQ(count_of(dflt.said, "step_graphs"), 0u) << dflt.said;
  EXPECT_EQ(dflt.report.replayed_steps, 0);
}

// By default a device with step graphs records and replays, as --step_graphs does.
TEST(TrainerStepGraphs, ByDefaultADeviceWithStepGraphsReplaysThem) {
  TempDir dir;
  const auto [dflt, eager] = default_and_eager(dir, graph_device());
  EXPECT_EQ(dflt.losses, eager.losses);
  EXPECT_EQ(dflt.weights, eager.weights);
  EXPECT_EQ(dflt.report.replayed_steps, 10);
  EXPECT_EQ(dflt.report.eager_reason, "");
}

// By default, what rules recording out on a device that has step graphs is said once.
TEST(TrainerStepGraphs, ByDefaultWhatRulesThemOutIsSaidOnce) {
  TempDir dir;
  const TrainingRun dflt = train(dir.file("default"), false, graph_device(), [](TrainingArguments& a, TrainerOptions&) {
    a.step_graphs.reset();
    a.gradient_accumulation_steps = 2;
  });
  EXPECT_EQ(dflt.report.replayed_steps, 0);
  EXPECT_EQ(count_of(dflt.said, "step_graphs"), 2u) << dflt.said;  // the flag's name, then how to turn them off
  EXPECT_NE(dflt.said.find("training runs eagerly: gradient_accumulation_steps is 2"), std::string::npos) << dflt.said;
  EXPECT_NE(dflt.said.find("--no_step_graphs turns them off"), std::string::npos) << dflt.said;
}

// ---- on a device with step graphs ------------------------------------------------

TEST(TrainerStepGraphs, RecordedStepsAreReplayedAndTrainAsEagerStepsDo) {
  TempDir dir;
  const TrainingRun eager = train(dir.file("eager"), false, graph_device());
  ReplayingRuntime& rt = graph_runtime();
  const int captures = rt.captures, replays = rt.replays, rehearsals = rt.rehearsals;
  const TrainingRun graphs = train(dir.file("graphs"), true, graph_device());
  ASSERT_EQ(eager.losses.size(), 14u);
  EXPECT_EQ(graphs.losses, eager.losses);
  EXPECT_NE(eager.losses.front(), eager.losses.back()) << "the model did not train";
  EXPECT_EQ(graphs.weights, eager.weights);
  // Step 1 warms up, step 2 is rehearsed, step 3 records and replays; the
  // last batch of each epoch (4 samples) runs eagerly.
  EXPECT_EQ(rt.rehearsals - rehearsals, 1);
  EXPECT_EQ(rt.captures - captures, 1);
  EXPECT_EQ(graphs.report.replayed_steps, 10);
  EXPECT_EQ(rt.replays - replays, 10);
  EXPECT_EQ(graphs.report.other_shape_steps, 2);
  EXPECT_EQ(graphs.report.eager_reason, "");
  EXPECT_EQ(count_of(graphs.said, "step_graphs"), 1u) << graphs.said;
  EXPECT_NE(graphs.said.find("hearth: step_graphs: 10 of 14 steps replayed from the recorded graph; 2 batch(es) of "
                             "other shapes than the recorded ones ran eagerly"),
            std::string::npos)
      << graphs.said;
}

TEST(TrainerStepGraphs, SmallerBatchesBetweenTheWarmUpAndTheRecordingRunEagerly) {
  // Batches of 32 from 52 samples: 32, 20, 32, 20, ...
  TempDir dir;
  auto batch32 = [](TrainingArguments& a, TrainerOptions&) {
    a.per_device_train_batch_size = 32;
    a.num_train_epochs = 4;
  };
  const TrainingRun eager = train(dir.file("eager"), false, graph_device(), batch32);
  const TrainingRun graphs = train(dir.file("graphs"), true, graph_device(), batch32);
  ASSERT_EQ(eager.losses.size(), 8u);
  EXPECT_EQ(graphs.losses, eager.losses);
  EXPECT_EQ(graphs.weights, eager.weights);
  // 32 warms up, 32 is rehearsed, then 32s are replayed; every 20 runs eagerly.
  EXPECT_EQ(graphs.report.replayed_steps, 2);
  EXPECT_EQ(graphs.report.other_shape_steps, 4);
  EXPECT_EQ(graphs.report.eager_reason, "");
}

// Saves a checkpoint after step 6 and stops there.
class StopAfterStep6 : public TrainerCallback {
 public:
  std::string name() const override { return "StopAfterStep6"; }
  void on_step_end(const TrainingArguments&, TrainerState& state, TrainerControl& control) override {
    if (state.global_step != 6) return;
    control.should_save = true;
    control.should_training_stop = true;
  }
};

TEST(TrainerStepGraphs, ARunResumedBeforeTheSmallerLastBatchRecordsTheFullBatches) {
  TempDir dir;
  const TrainingRun eager = train(dir.file("eager"), false, graph_device());
  {
    TrainingArguments args = toy_args(dir.file("resumed"));
    args.use_cpu = false;
    args.device = graph_device().str();
    args.dataloader_pin_memory = false;
    auto model = small_cnn();  // then the data, as train() does: the generator's state follows
    Trainer first(model, args, images(), nullptr, {std::make_shared<StopAfterStep6>()}, testing::quiet());
    first.train();
  }
  // Step 7 is the epoch's batch of 4: the recorded shapes are the next full batch's.
  const TrainingRun resumed = train(dir.file("resumed"), true, graph_device(),
                                    [](TrainingArguments& a, TrainerOptions&) { a.resume_from_checkpoint = "latest"; });
  ASSERT_EQ(resumed.losses.size(), 8u);
  EXPECT_EQ(resumed.losses, std::vector<double>(eager.losses.begin() + 6, eager.losses.end()));
  EXPECT_EQ(resumed.weights, eager.weights);
  // 7 (4 samples) eager, 8 warms up, 9 is rehearsed, 10-13 replayed, 14 (4 samples) eager.
  EXPECT_EQ(resumed.report.replayed_steps, 4);
  EXPECT_EQ(resumed.report.other_shape_steps, 2);
}

TEST(TrainerStepGraphs, AStepThatReadsTheHostRunsEagerlyAndSaysWhyOnce) {
  TempDir dir;
  auto reads_host = [](TrainingArguments&, TrainerOptions& o) {
    o.forward = [](nn::Module& model, const data::Batch& batch) {
      ForwardOutput out = image_classification_forward(model, batch);
      if (out.loss.item<float>() < 0) out.loss = mul(out.loss, 2.0);  // never: only the read matters
      return out;
    };
  };
  const TrainingRun eager = train(dir.file("eager"), false, graph_device(), reads_host);
  const int captures = graph_runtime().captures;
  const TrainingRun graphs = train(dir.file("graphs"), true, graph_device(), reads_host);
  EXPECT_EQ(graphs.losses, eager.losses);
  EXPECT_EQ(graphs.weights, eager.weights);
  EXPECT_EQ(graph_runtime().captures, captures) << "nothing is recorded";
  EXPECT_EQ(graphs.report.replayed_steps, 0);
  EXPECT_NE(graphs.report.eager_reason.find("copies between host and device"), std::string::npos)
      << graphs.report.eager_reason;
  EXPECT_EQ(count_of(graphs.said, "step_graphs"), 1u) << graphs.said;
  EXPECT_NE(graphs.said.find("hearth: step_graphs: training runs eagerly after step 2: it copies"), std::string::npos)
      << graphs.said;
}

// Drops every gradient after step 5, as a user's callback might.
class DropGradients : public TrainerCallback {
 public:
  explicit DropGradients(std::shared_ptr<nn::Module> model) : model_(std::move(model)) {}
  std::string name() const override { return "DropGradients"; }
  void on_step_end(const TrainingArguments&, TrainerState& state, TrainerControl&) override {
    if (state.global_step == 5)
      for (const Tensor& p : model_->parameters()) p.zero_grad_(/*set_to_none=*/true);
  }

 private:
  std::shared_ptr<nn::Module> model_;
};

TEST(TrainerStepGraphs, GradientsReplacedAfterRecordingEndTheReplays) {
  TempDir dir;
  // The callback needs the model the Trainer trains: build the run by hand.
  auto run = [&](bool graphs) {
    TrainingArguments args = toy_args(dir.file(graphs ? "graphs" : "eager"));
    args.use_cpu = false;
    args.device = graph_device().str();
    args.dataloader_pin_memory = false;
    args.step_graphs = graphs;
    std::ostringstream console;
    TrainerOptions options;
    options.console = &console;
    options.progress_bar = false;
    auto model = small_cnn();
    auto rec = std::make_shared<LossRecorder>();
    Trainer trainer(model, args, images(), nullptr, {rec, std::make_shared<DropGradients>(model)}, options);
    trainer.train();
    return TrainingRun{rec->losses, {}, console.str(), trainer.step_graph_report()};
  };
  const TrainingRun eager = run(false);
  const TrainingRun graphs = run(true);
  EXPECT_EQ(graphs.losses, eager.losses);
  const StepGraphReport& report = graphs.report;
  const std::string& said = graphs.said;
  EXPECT_EQ(report.replayed_steps, 3);  // steps 3, 4 and 5
  EXPECT_NE(report.eager_reason.find("gradients were replaced after the step was recorded"), std::string::npos)
      << report.eager_reason;
  EXPECT_NE(said.find("hearth: step_graphs: training runs eagerly after step 6: the parameters or their gradients"),
            std::string::npos)
      << said;
}

// Throws from a step end once the graph is replaying.
class FailAtStep5 : public TrainerCallback {
 public:
  std::string name() const override { return "FailAtStep5"; }
  void on_step_end(const TrainingArguments&, TrainerState& state, TrainerControl&) override {
    if (state.global_step == 5) HEARTH_THROW(OutOfMemoryError, "injected at step 5");
  }
};

// An error that ends a graphed run leaves the model as an eager run's error
// leaves it: no gradients kept by the graph.
TEST(TrainerStepGraphs, AnErrorEndingAGraphedRunLeavesNoGradients) {
  TempDir dir;
  TrainingArguments args = toy_args(dir.file("graphs"));
  args.use_cpu = false;
  args.device = graph_device().str();
  args.dataloader_pin_memory = false;
  TrainerOptions options;
  std::ostringstream console;
  options.console = &console;
  options.progress_bar = false;
  auto model = small_cnn();
  Trainer trainer(model, args, images(), nullptr, {std::make_shared<FailAtStep5>()}, options);
  EXPECT_THROW(trainer.train(), OutOfMemoryError);
  EXPECT_GT(trainer.step_graph_report().replayed_steps, 0) << "the run was graphed when it failed";
  for (const Tensor& p : model->parameters()) EXPECT_FALSE(p.grad().defined());
}

TEST(TrainerStepGraphs, ArgumentsThatRuleRecordingOutAreNamed) {
  TempDir dir;
  auto accumulate = [](TrainingArguments& a, TrainerOptions&) { a.gradient_accumulation_steps = 2; };
  const TrainingRun eager = train(dir.file("eager"), false, graph_device(), accumulate);
  const TrainingRun graphs = train(dir.file("graphs"), true, graph_device(), accumulate);
  EXPECT_EQ(graphs.losses, eager.losses);
  EXPECT_EQ(count_of(graphs.said, "step_graphs"), 1u) << graphs.said;
  EXPECT_NE(graphs.said.find("training runs eagerly: gradient_accumulation_steps is 2"), std::string::npos)
      << graphs.said;

  auto anomaly = [](TrainingArguments& a, TrainerOptions&) {
    a.detect_anomaly = true;
    a.max_steps = 2;
  };
  EXPECT_NE(train(dir.file("anomaly"), true, graph_device(), anomaly).report.eager_reason.find("detect_anomaly"),
            std::string::npos);
}

// ---- evaluation -------------------------------------------------------------------

struct EvaluatedRun {
  std::vector<std::pair<double, double>> evaluations;  // eval_loss, eval_accuracy of each
  std::string said;
};

std::vector<std::pair<double, double>> evaluations_of(const TrainerState& state) {
  std::vector<std::pair<double, double>> out;
  for (const auto& entry : state.log_history)
    if (entry.contains("eval_loss"))
      out.emplace_back(entry["eval_loss"].get<double>(), entry["eval_accuracy"].get<double>());
  return out;
}

// toy_args on graph_device(), evaluating in batches of 8.
TrainingArguments evaluating_args(const std::string& dir, bool graphs) {
  TrainingArguments args = toy_args(dir);
  args.use_cpu = false;
  args.device = graph_device().str();
  args.dataloader_pin_memory = false;
  args.step_graphs = graphs;
  args.per_device_eval_batch_size = 8;
  return args;
}

// Trains on graph_device() with an evaluation after each epoch: 44 samples
// in batches of 8, five full batches and one of 4.
EvaluatedRun train_evaluating(const std::string& dir, bool graphs,
                              const std::function<void(TrainingArguments&, TrainerOptions&)>& adjust = {},
                              std::vector<CallbackPtr> callbacks = {}) {
  TrainingArguments args = evaluating_args(dir, graphs);
  args.eval_strategy = "epoch";
  std::ostringstream console;
  TrainerOptions options;
  options.console = &console;
  options.progress_bar = false;
  if (adjust) adjust(args, options);
  auto model = small_cnn();
  Trainer trainer(model, args, images(), images(44), std::move(callbacks), options);
  trainer.train();
  return EvaluatedRun{evaluations_of(trainer.state()), console.str()};
}

TEST(TrainerStepGraphs, RecordedEvaluationGivesTheEagerMetricsAfterEveryEpoch) {
  TempDir dir;
  const EvaluatedRun eager = train_evaluating(dir.file("eager"), false);
  ReplayingRuntime& rt = graph_runtime();
  const int captures = rt.captures, replays = rt.replays, rehearsals = rt.rehearsals;
  const EvaluatedRun graphs = train_evaluating(dir.file("graphs"), true);
  ASSERT_EQ(eager.evaluations.size(), 2u);
  EXPECT_EQ(graphs.evaluations, eager.evaluations);
  EXPECT_NE(eager.evaluations[0].first, eager.evaluations[1].first) << "the model did not train between them";
  // Training: one recording, 10 replays. Evaluation 1: batch 1 warms up,
  // batch 2 is rehearsed, 3-5 are replayed, the batch of 4 runs eagerly;
  // evaluation 2 replays the same recording for its five full batches.
  EXPECT_EQ(rt.captures - captures, 2);
  EXPECT_EQ(rt.rehearsals - rehearsals, 2);
  EXPECT_EQ(rt.replays - replays, 10 + 3 + 5);
  EXPECT_EQ(count_of(graphs.said, "evaluation runs eagerly"), 0u) << graphs.said;
}

// With compute_metrics the evaluation takes every batch's logits to the host
// and its loss from the forward: through the recorded forward, the same
// logits and loss as eagerly.
TEST(TrainerStepGraphs, RecordedEvaluationFeedsComputeMetricsTheEagerLogitsAndLoss) {
  TempDir dir;
  auto logits_sum = [](TrainingArguments&, TrainerOptions& o) {
    o.compute_metrics = [](const Tensor& logits, const Tensor& labels) {
      double total = 0;
      for (float v : logits.to(DType::float32).contiguous().to_vector<float>()) total += v;
      return Metrics{{"logits_sum", total}, {"samples", static_cast<double>(labels.size(0))}};
    };
  };
  auto sums = [](const std::string& said, const TrainerState& state) {
    std::vector<std::pair<double, double>> out;
    for (const auto& entry : state.log_history)
      if (entry.contains("eval_logits_sum"))
        out.emplace_back(entry["eval_logits_sum"].get<double>(), entry["eval_loss"].get<double>());
    EXPECT_EQ(out.size(), 2u) << said;
    return out;
  };
  auto run = [&](bool graphs) {
    TrainingArguments args = evaluating_args(dir.file(graphs ? "graphs" : "eager"), graphs);
    args.eval_strategy = "epoch";
    std::ostringstream console;
    TrainerOptions options;
    options.console = &console;
    options.progress_bar = false;
    logits_sum(args, options);
    Trainer trainer(small_cnn(), args, images(), images(44), {}, options);
    trainer.train();
    return sums(console.str(), trainer.state());
  };
  const auto eager = run(false);
  const int replays = graph_runtime().replays;
  const auto graphs = run(true);
  EXPECT_EQ(graphs, eager);
  EXPECT_EQ(graph_runtime().replays - replays, 10 + 3 + 5);
}

TEST(TrainerStepGraphs, EvaluateOutsideTrainingRecordsEachCallAndGivesTheEagerMetrics) {
  TempDir dir;
  auto evaluate_twice = [&](bool graphs) {
    TrainingArguments args = evaluating_args(dir.file(graphs ? "graphs" : "eager"), graphs);
    Trainer trainer(small_cnn(), args, images(), images(44), {}, testing::quiet());
    std::vector<std::pair<double, double>> out;
    for (int i = 0; i < 2; ++i) {
      Metrics m = trainer.evaluate();
      out.emplace_back(m.at("eval_loss"), m.at("eval_accuracy"));
    }
    return out;
  };
  const auto eager = evaluate_twice(false);
  ReplayingRuntime& rt = graph_runtime();
  const int captures = rt.captures, replays = rt.replays;
  const auto graphs = evaluate_twice(true);
  EXPECT_EQ(graphs, eager);
  // Outside train() each call records (and frees) its own: 3 replays each.
  EXPECT_EQ(rt.captures - captures, 2);
  EXPECT_EQ(rt.replays - replays, 6);
}

TEST(TrainerStepGraphs, AnEvaluationThatReadsTheHostRunsEagerlyAndSaysWhyOnce) {
  TempDir dir;
  auto reads_host_when_evaluating = [](TrainingArguments&, TrainerOptions& o) {
    o.forward = [](nn::Module& model, const data::Batch& batch) {
      ForwardOutput out = image_classification_forward(model, batch);
      if (!model.is_training() && out.loss.item<float>() < 0) out.loss = mul(out.loss, 2.0);  // never: the read matters
      return out;
    };
  };
  const EvaluatedRun eager = train_evaluating(dir.file("eager"), false, reads_host_when_evaluating);
  const int captures = graph_runtime().captures;
  const EvaluatedRun graphs = train_evaluating(dir.file("graphs"), true, reads_host_when_evaluating);
  EXPECT_EQ(graphs.evaluations, eager.evaluations);
  EXPECT_EQ(graph_runtime().captures - captures, 1) << "training only";
  EXPECT_EQ(count_of(graphs.said, "evaluation runs eagerly"), 1u) << graphs.said;
  EXPECT_NE(graphs.said.find("hearth: step_graphs: evaluation runs eagerly: it copies between host and device"),
            std::string::npos)
      << graphs.said;
}

// Lays the model's weights out channels_last after the first evaluation: new
// memory for each 4-D tensor, as a user's callback might.
class RelayAfterFirstEvaluation : public TrainerCallback {
 public:
  explicit RelayAfterFirstEvaluation(std::shared_ptr<nn::Module> model) : model_(std::move(model)) {}
  std::string name() const override { return "RelayAfterFirstEvaluation"; }
  void on_evaluate(const TrainingArguments&, TrainerState&, TrainerControl&, const Metrics&) override {
    if (++evaluations_ == 1) model_->to(MemoryFormat::channels_last);
  }

 private:
  std::shared_ptr<nn::Module> model_;
  int evaluations_ = 0;
};

TEST(TrainerStepGraphs, AnEvaluationOfAModelWhoseWeightsMovedIsRecordedAnew) {
  TempDir dir;
  // Gradient accumulation keeps training eager, whose steps follow the new memory.
  auto run = [&](bool graphs) {
    TrainingArguments args = evaluating_args(dir.file(graphs ? "graphs" : "eager"), graphs);
    args.gradient_accumulation_steps = 2;
    args.eval_strategy = "epoch";
    auto model = small_cnn();
    Trainer trainer(model, args, images(), images(44), {std::make_shared<RelayAfterFirstEvaluation>(model)},
                    testing::quiet());
    trainer.train();
    return evaluations_of(trainer.state());
  };
  const auto eager = run(false);
  ReplayingRuntime& rt = graph_runtime();
  const int captures = rt.captures, replays = rt.replays;
  const auto graphs = run(true);
  ASSERT_EQ(eager.size(), 2u);
  EXPECT_EQ(graphs, eager);
  EXPECT_EQ(rt.captures - captures, 2) << "each evaluation recorded its own";
  EXPECT_EQ(rt.replays - replays, 3 + 3);
}

}  // namespace
}  // namespace hearth::train
