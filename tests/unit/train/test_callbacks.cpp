#include <gtest/gtest.h>

#include "hearth/core/errors.h"
#include "hearth/train/callbacks.h"

namespace hearth::train {
namespace {

TEST(EarlyStopping, StopsAfterPatienceEvaluationsWithoutImprovement) {
  TrainingArguments args;
  args.eval_strategy = "steps";
  TrainerState state;
  TrainerControl control;
  EarlyStoppingCallback cb(/*patience=*/2, /*threshold=*/0.01);
  cb.on_train_begin(args, state, control);
  for (double loss : {1.0, 0.8, 0.795, 0.7}) {
    cb.on_evaluate(args, state, control, {{"eval_loss", loss}});
    EXPECT_FALSE(control.should_training_stop);
  }
  EXPECT_EQ(cb.patience_counter(), 0);  // 0.795 did not count (below the threshold), 0.7 reset it
  cb.on_evaluate(args, state, control, {{"eval_loss", 0.71}});
  EXPECT_FALSE(control.should_training_stop);
  cb.on_evaluate(args, state, control, {{"eval_loss", 0.695}});
  EXPECT_TRUE(control.should_training_stop);
  EXPECT_NE(control.stop_reason.find("eval_loss has not improved on 0.7 for 2 evaluations"), std::string::npos)
      << control.stop_reason;
}

TEST(EarlyStopping, FollowsTheMetricsDirectionAndSavesItsState) {
  TrainingArguments args;
  args.eval_strategy = "epoch";
  args.metric_for_best_model = "accuracy";
  TrainerState state;
  TrainerControl control;
  EarlyStoppingCallback cb(1);
  cb.on_evaluate(args, state, control, {{"eval_accuracy", 0.5}});
  cb.on_evaluate(args, state, control, {{"eval_accuracy", 0.6}});
  EXPECT_FALSE(control.should_training_stop);
  nlohmann::json saved = cb.state_dict();
  EarlyStoppingCallback restored(1);
  restored.load_state_dict(saved);
  restored.on_evaluate(args, state, control, {{"eval_accuracy", 0.55}});
  EXPECT_TRUE(control.should_training_stop);
}

TEST(EarlyStopping, NeedsEvaluationsAndSaneSettings) {
  TrainingArguments args;  // eval_strategy "no"
  TrainerState state;
  TrainerControl control;
  EarlyStoppingCallback cb;
  EXPECT_THROW(cb.on_train_begin(args, state, control), ValueError);
  EXPECT_THROW(EarlyStoppingCallback(0), ValueError);
  EXPECT_THROW(EarlyStoppingCallback(1, -0.5), ValueError);
  EXPECT_THROW(cb.load_state_dict(nlohmann::json::object()), ValueError);
}

TEST(BestMetric, NamesTheMissingMetricAndTheOnesThereAre) {
  TrainingArguments args;
  args.metric_for_best_model = "f1";
  try {
    best_model_metric(args, {{"eval_loss", 1.0}, {"eval_accuracy", 0.5}});
    FAIL();
  } catch (const ValueError& e) {
    EXPECT_STREQ(e.what(),
                 "[trainer] metric_for_best_model is 'eval_f1', but evaluation reports only: eval_accuracy, eval_loss");
  }
  args.metric_for_best_model = "eval_loss";
  EXPECT_DOUBLE_EQ(best_model_metric(args, {{"eval_loss", 2.0}}), 2.0);
  EXPECT_TRUE(metric_improves(args, 1.0, std::nullopt));
  EXPECT_TRUE(metric_improves(args, 1.0, 2.0));
  EXPECT_FALSE(metric_improves(args, 2.0, 1.0));
  EXPECT_FALSE(metric_improves(args, std::nan(""), 1.0));
  args.greater_is_better = true;
  EXPECT_TRUE(metric_improves(args, 2.0, 1.0));
}

}  // namespace
}  // namespace hearth::train
