// TrainerOptions::forward, compute_metrics and collate: models with other
// inputs and losses, task metrics, and the trainer_state.json of save_state.
#include <cmath>
#include <filesystem>
#include <fstream>

#include <gtest/gtest.h>

#include "hearth/autograd/grad_mode.h"
#include "hearth/ops/nn_functional.h"
#include "tests/unit/train/train_testing.h"

namespace hearth::train {
namespace {

namespace fs = std::filesystem;
using testing::quiet;
using testing::toy_args;
using testing::toy_dataset;
using testing::toy_model;

// The toy task with its features under another name, as a text model's
// input_ids would be.
std::shared_ptr<const data::Dataset> renamed_toy(int64_t n) {
  auto base = toy_dataset(n);
  std::vector<Tensor> xs, ys;
  for (int64_t i = 0; i < base->size(); ++i) {
    data::Example e = base->get(i);
    xs.push_back(e.at(data::field::kPixelValues));
    ys.push_back(e.at(data::field::kLabels));
  }
  return std::make_shared<data::TensorDataset>(
      data::Example::Map{{"features", data::stack_samples(xs)}, {data::field::kLabels, data::stack_samples(ys)}});
}

TEST(TrainerForward, CustomForwardMetricsAndCollate) {
  const fs::path dir = fs::temp_directory_path() / "hearth_test_trainer_forward";
  fs::remove_all(dir);
  TrainingArguments args = toy_args(dir.string());
  args.eval_strategy = "epoch";
  TrainerOptions opts = quiet();
  int forward_calls = 0, collate_calls = 0;
  opts.forward = [&forward_calls](nn::Module& model, const data::Batch& batch) {
    ++forward_calls;
    Tensor logits = model.forward(batch.at("features"));
    return ForwardOutput{cross_entropy(logits, batch.at(data::field::kLabels)), logits};
  };
  opts.collate = [&collate_calls](std::vector<data::Example> samples) {
    ++collate_calls;
    return data::default_collate(std::move(samples));
  };
  int64_t seen = 0;
  opts.compute_metrics = [&seen](const Tensor& logits, const Tensor& labels) {
    seen = labels.size(0);
    EXPECT_TRUE(logits.device().is_cpu());
    EXPECT_EQ(logits.size(0), labels.size(0));
    return Metrics{{"first_label", static_cast<double>(labels.to_vector<int64_t>().at(0))}};
  };
  auto eval_set = renamed_toy(40);
  Trainer trainer(toy_model(), args, renamed_toy(64), eval_set, {}, opts);
  trainer.train();
  Metrics m = trainer.evaluate();
  EXPECT_EQ(seen, 40);
  EXPECT_GT(forward_calls, 0);
  EXPECT_GT(collate_calls, 0);
  EXPECT_EQ(m.at("eval_first_label"), static_cast<double>(eval_set->get(0).at(data::field::kLabels).item<int64_t>()));
  ASSERT_TRUE(m.count("eval_loss"));
  EXPECT_TRUE(std::isfinite(m.at("eval_loss")));
  EXPECT_FALSE(m.count("eval_accuracy"));

  // The loss is the sample-weighted mean over uneven batches (16, 16, 8).
  double want = 0.0;
  {
    NoGradGuard no_grad;
    trainer.model().eval();
    for (int64_t i = 0; i < eval_set->size(); ++i) {
      data::Example e = eval_set->get(i);
      Tensor logits = trainer.model().forward(e.at("features").reshape({1, 4}));
      want += cross_entropy(logits, e.at(data::field::kLabels).reshape({1})).item<double>();
    }
  }
  EXPECT_NEAR(m.at("eval_loss"), want / 40.0, 1e-5);

  trainer.save_state();
  std::ifstream in(dir / "trainer_state.json");
  ASSERT_TRUE(in.good());
  nlohmann::json state = nlohmann::json::parse(in);
  EXPECT_EQ(state.at("global_step").get<int64_t>(), trainer.state().global_step);
  fs::remove_all(dir);
}

}  // namespace
}  // namespace hearth::train
