// The Trainer with TrainingArguments::step_graphs on cuda:0: a small CNN with
// batch norm and dropout trained with its steps' forward and backward
// recorded and replayed gives the logged losses and the final weights of the
// same run trained eagerly, the smaller last batch of each epoch (run eagerly
// between replays) included. Another dropout mask or a stale input would move
// them by far more than the tolerance, which is for cuDNN's weight-gradient
// algorithms: they may sum in a different order from run to run. Evaluation
// after each epoch, its forward recorded once and replayed in both, gives
// the loss and accuracy an eager evaluation of the same weights gives
// (fp16-mixed too, whose training steps run eagerly).
#include <cmath>
#include <memory>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "hearth/core/generator.h"
#include "hearth/data/dataset.h"
#include "hearth/nn/nn.h"
#include "hearth/ops/factory.h"
#include "hearth/ops/param_half_copies.h"
#include "hearth/train/callbacks.h"
#include "hearth/train/trainer.h"
#include "tests/gpu/gpu_test_util.h"
#include "tests/support/temp_dir.h"

namespace hearth::gpu_testing {
namespace {

using train::TrainingArguments;

// 52 images in 5 classes: batches of 8 leave a last batch of 4 per epoch.
std::shared_ptr<const data::Dataset> images() {
  manual_seed(21);
  const int64_t n = 52;
  Tensor x = randn({n, 3, 8, 8});
  Tensor y = randint(0, 5, {n});
  return std::make_shared<data::TensorDataset>(
      data::Example::Map{{data::field::kPixelValues, x}, {data::field::kLabels, y}});
}

std::shared_ptr<nn::Module> small_cnn() {
  manual_seed(5);
  return std::make_shared<nn::Sequential>(
      std::make_shared<nn::Conv2d>(3, 8, 3, 1, 1, 1, 1, /*bias=*/false), std::make_shared<nn::BatchNorm2d>(8), std::make_shared<nn::ReLU>(),
      std::make_shared<nn::Flatten>(), std::make_shared<nn::Dropout>(0.3), std::make_shared<nn::Linear>(8 * 8 * 8, 5));
}

// Every step's loss, read after the step (outside anything recorded).
class StepLosses : public train::TrainerCallback {
 public:
  std::string name() const override { return "StepLosses"; }
  void on_step_end(const TrainingArguments&, train::TrainerState& state, train::TrainerControl&) override {
    losses.push_back(state.step_loss.item<double>());
  }
  std::vector<double> losses;
};

struct TrainingRun {
  std::vector<double> step_losses, logged_losses;
  std::vector<Tensor> weights;  // parameters and buffers, on the CPU
  train::StepGraphReport report;
};

TrainingRun train_on_cuda(const std::string& dir, bool graphs, const std::string& precision) {
  TrainingArguments args;
  args.output_dir = dir;
  args.device = cuda0().str();
  args.per_device_train_batch_size = 8;
  args.num_train_epochs = 2;
  args.learning_rate = 1e-2;
  args.logging_steps = 1;
  args.save_strategy = "no";
  args.report_to = {"none"};
  args.precision = precision;
  args.step_graphs = graphs;
  train::TrainerOptions options;
  options.console = nullptr;
  auto losses = std::make_shared<StepLosses>();
  auto model = small_cnn();
  train::Trainer trainer(model, args, images(), nullptr, {losses}, options);
  trainer.train();
  TrainingRun r;
  r.step_losses = losses->losses;
  for (const auto& entry : trainer.state().log_history)
    if (entry.contains("loss")) r.logged_losses.push_back(entry["loss"].get<double>());
  for (const Tensor& p : model->parameters()) r.weights.push_back(p.cpu());
  for (const Tensor& b : model->buffers()) r.weights.push_back(b.cpu());
  r.report = trainer.step_graph_report();
  return r;
}

class TrainerStepGraphs : public ::testing::TestWithParam<std::string> {};

TEST_P(TrainerStepGraphs, ReplayedTrainingEqualsEagerTraining) {
  HEARTH_REQUIRE_CUDA();
  hearth::testing::TempDir dir;
  const TrainingRun eager = train_on_cuda(dir.file("eager"), false, GetParam());
  const TrainingRun graphed = train_on_cuda(dir.file("graphed"), true, GetParam());

  // 7 steps per epoch, 2 epochs: step 1 warms up, step 2 is rehearsed, the
  // rest are replayed but for each epoch's last batch of 4.
  EXPECT_EQ(graphed.report.eager_reason, "");
  EXPECT_EQ(graphed.report.replayed_steps, 10);
  EXPECT_EQ(graphed.report.other_shape_steps, 2);
  EXPECT_EQ(eager.report.replayed_steps, 0);

  ASSERT_EQ(eager.step_losses.size(), 14u);
  ASSERT_EQ(graphed.step_losses.size(), 14u);
  for (size_t i = 0; i < 14; ++i)
    EXPECT_NEAR(graphed.step_losses[i], eager.step_losses[i], 1e-5 * std::abs(eager.step_losses[i])) << "step " << i;
  ASSERT_EQ(eager.logged_losses.size(), 14u);
  ASSERT_EQ(graphed.logged_losses.size(), 14u);
  for (size_t i = 0; i < 14; ++i)
    EXPECT_NEAR(graphed.logged_losses[i], eager.logged_losses[i], 1e-5 * std::abs(eager.logged_losses[i]));
  EXPECT_NE(eager.step_losses.front(), eager.step_losses.back()) << "the model did not train";
  ASSERT_EQ(graphed.weights.size(), eager.weights.size());
  for (size_t i = 0; i < eager.weights.size(); ++i)
    EXPECT_LT(relative_error(graphed.weights[i], eager.weights[i]), 1e-4) << "parameter or buffer " << i;
}

INSTANTIATE_TEST_SUITE_P(Precision, TrainerStepGraphs, ::testing::Values("fp32", "bf16-mixed"),
                         [](const auto& info) { return info.param == "fp32" ? "fp32" : "bf16_mixed"; });

// The recorded bf16-mixed forward reads the weights' bf16 copies, which the
// eager optimizer step writes in place after each replay
// (hearth/ops/param_half_copies.h): the same training as with the copies off,
// where the recorded forward casts the weights itself.
TEST(TrainerStepGraphsHalfCopies, ReplayedForwardReadsTheCopiesTheOptimizerWrites) {
  HEARTH_REQUIRE_CUDA();
  hearth::testing::TempDir dir;
  const bool before = optimizer_half_copies_enabled();
  set_optimizer_half_copies_enabled(false);
  const TrainingRun off = train_on_cuda(dir.file("off"), true, "bf16-mixed");
  set_optimizer_half_copies_enabled(true);
  const TrainingRun on = train_on_cuda(dir.file("on"), true, "bf16-mixed");
  set_optimizer_half_copies_enabled(before);
  EXPECT_EQ(on.report.eager_reason, "");
  EXPECT_EQ(on.report.replayed_steps, 10);
  ASSERT_EQ(on.step_losses.size(), off.step_losses.size());
  for (size_t i = 0; i < on.step_losses.size(); ++i)
    EXPECT_NEAR(on.step_losses[i], off.step_losses[i], 1e-5 * std::abs(off.step_losses[i])) << "step " << i;
  ASSERT_EQ(on.weights.size(), off.weights.size());
  for (size_t i = 0; i < on.weights.size(); ++i)
    EXPECT_LT(relative_error(on.weights[i], off.weights[i]), 1e-4) << "parameter or buffer " << i;
}

TEST(TrainerStepGraphsFallback, Fp16MixedTrainsEagerlyAndSaysWhy) {
  HEARTH_REQUIRE_CUDA();
  hearth::testing::TempDir dir;
  const TrainingRun r = train_on_cuda(dir.file("fp16"), true, "fp16-mixed");
  EXPECT_EQ(r.report.replayed_steps, 0);
  EXPECT_NE(r.report.eager_reason.find("fp16-mixed"), std::string::npos) << r.report.eager_reason;
  EXPECT_EQ(r.step_losses.size(), 14u);
}

// At each evaluation of a run whose evaluations are recorded, the same
// evaluation by a Trainer whose steps all run eagerly, on the same model.
class EagerEvaluationBeside : public train::TrainerCallback {
 public:
  EagerEvaluationBeside(std::shared_ptr<nn::Module> model, TrainingArguments args,
                        std::shared_ptr<const data::Dataset> eval_set)
      : model_(std::move(model)), args_(std::move(args)), eval_set_(std::move(eval_set)) {}
  std::string name() const override { return "EagerEvaluationBeside"; }
  void on_evaluate(const TrainingArguments&, train::TrainerState&, train::TrainerControl&,
                   const train::Metrics& metrics) override {
    TrainingArguments eager = args_;
    eager.step_graphs = false;
    train::TrainerOptions options;
    options.console = nullptr;
    train::Trainer beside(model_, eager, eval_set_, eval_set_, {}, options);
    const train::Metrics m = beside.evaluate();
    recorded.emplace_back(metrics.at("eval_loss"), metrics.at("eval_accuracy"));
    eager_ones.emplace_back(m.at("eval_loss"), m.at("eval_accuracy"));
  }
  std::vector<std::pair<double, double>> recorded, eager_ones;

 private:
  std::shared_ptr<nn::Module> model_;
  TrainingArguments args_;
  std::shared_ptr<const data::Dataset> eval_set_;
};

// 44 evaluation samples in batches of 8 (five full, one of 4), after each of
// two epochs: the second evaluation replays the first one's recording, so it
// must read the weights (or their low-precision copies) as trained since.
void expect_recorded_evaluations_equal_eager_ones(const std::string& precision) {
  hearth::testing::TempDir dir;
  TrainingArguments args;
  args.output_dir = dir.file("run");
  args.device = cuda0().str();
  args.per_device_train_batch_size = 8;
  args.per_device_eval_batch_size = 8;
  args.num_train_epochs = 2;
  args.learning_rate = 1e-2;
  args.eval_strategy = "epoch";
  args.save_strategy = "no";
  args.report_to = {"none"};
  args.precision = precision;
  args.step_graphs = true;
  manual_seed(33);
  auto eval_set = std::make_shared<data::TensorDataset>(data::Example::Map{
      {data::field::kPixelValues, randn({44, 3, 8, 8})}, {data::field::kLabels, randint(0, 5, {44})}});
  auto model = small_cnn();
  auto beside = std::make_shared<EagerEvaluationBeside>(model, args, eval_set);
  train::TrainerOptions options;
  options.console = nullptr;
  train::Trainer trainer(model, args, images(), eval_set, {beside}, options);
  trainer.train();
  ASSERT_EQ(beside->recorded.size(), 2u);
  ASSERT_EQ(beside->eager_ones.size(), 2u);
  EXPECT_NE(beside->eager_ones[0].first, beside->eager_ones[1].first) << "the model did not train between them";
  for (size_t i = 0; i < 2; ++i) {
    EXPECT_NEAR(beside->recorded[i].first, beside->eager_ones[i].first, 1e-6 * std::abs(beside->eager_ones[i].first))
        << "evaluation " << i;
    EXPECT_EQ(beside->recorded[i].second, beside->eager_ones[i].second) << "evaluation " << i;
  }
}

class TrainerEvaluationGraphs : public ::testing::TestWithParam<std::string> {};

TEST_P(TrainerEvaluationGraphs, ReplayedEvaluationEqualsEagerEvaluation) {
  HEARTH_REQUIRE_CUDA();
  expect_recorded_evaluations_equal_eager_ones(GetParam());
}

// Without the optimizer's bf16 copies the recorded forward casts the weights
// itself at every replay (an eager evaluation reuses one cast per weight).
TEST(TrainerEvaluationGraphsHalfCopies, WithoutTheCopiesTheReplayCastsTheTrainedWeights) {
  HEARTH_REQUIRE_CUDA();
  const bool before = optimizer_half_copies_enabled();
  set_optimizer_half_copies_enabled(false);
  expect_recorded_evaluations_equal_eager_ones("bf16-mixed");
  set_optimizer_half_copies_enabled(before);
}

INSTANTIATE_TEST_SUITE_P(Precision, TrainerEvaluationGraphs, ::testing::Values("fp32", "bf16-mixed", "fp16-mixed"),
                         [](const auto& info) {
                           std::string name = info.param;
                           for (char& c : name)
                             if (c == '-') c = '_';
                           return name;
                         });
}  // namespace
}  // namespace hearth::gpu_testing
