// Metrics against values worked out by hand (and as scikit-learn/SciPy give them).
#include <cmath>

#include <gtest/gtest.h>

#include "hearth/core/errors.h"
#include "hearth/ops/factory.h"
#include "hearth/train/eval_metrics.h"

namespace hearth::train {
namespace {

TEST(EvalMetrics, AccuracyAndBinaryF1) {
  EXPECT_DOUBLE_EQ(accuracy({1, 1, 0, 0}, {1, 0, 1, 0}), 0.5);
  // tp 1, fp 1, fn 1: 2 / (2 + 1 + 1).
  EXPECT_DOUBLE_EQ(binary_f1({1, 1, 0, 0}, {1, 0, 1, 0}), 0.5);
  EXPECT_DOUBLE_EQ(binary_f1({0, 0}, {0, 0}), 0.0);  // no positives at all
  EXPECT_THROW(accuracy({1}, {1, 0}), ValueError);
  EXPECT_THROW(accuracy({}, {}), ValueError);
}

TEST(EvalMetrics, MatthewsCorrelation) {
  // tp 2, fn 1, fp 1, tn 0: (0 - 1) / sqrt(3 * 3 * 1 * 1).
  EXPECT_NEAR(matthews_corrcoef({1, 0, 1, 1}, {1, 1, 1, 0}), -1.0 / 3.0, 1e-12);
  EXPECT_DOUBLE_EQ(matthews_corrcoef({0, 1, 0, 1}, {0, 1, 0, 1}), 1.0);
  EXPECT_DOUBLE_EQ(matthews_corrcoef({1, 0, 1, 0}, {0, 1, 0, 1}), -1.0);
  // One predicted class only: undefined, reported as 0.
  EXPECT_DOUBLE_EQ(matthews_corrcoef({1, 1, 1, 1}, {0, 1, 0, 1}), 0.0);
  // Three classes: c 5, s 6, t (2, 2, 2), p (2, 1, 3): (30 - 12) / sqrt((36 - 14)(36 - 12)).
  EXPECT_NEAR(matthews_corrcoef({0, 0, 1, 2, 2, 2}, {0, 0, 1, 1, 2, 2}), 0.7833494518006403, 1e-12);
}

TEST(EvalMetrics, PearsonSpearmanAndTies) {
  EXPECT_NEAR(pearson({1, 2, 3, 4, 5}, {2, 4, 5, 4, 5}), 0.7745966692414834, 1e-12);
  EXPECT_NEAR(pearson({1, 2, 3}, {-2, -4, -6}), -1.0, 1e-12);
  EXPECT_TRUE(std::isnan(pearson({1, 1, 1}, {1, 2, 3})));
  EXPECT_EQ(average_ranks({10, 20, 10, 5}), (std::vector<double>{2.5, 4, 2.5, 1}));
  // Ranks (1, 2.5, 2.5, 4) and (1, 3, 2, 4).
  EXPECT_NEAR(spearman({1, 2, 2, 3}, {1, 3, 2, 4}), 0.9486832980505138, 1e-12);
  // Any increasing map is a perfect rank correlation.
  EXPECT_NEAR(spearman({1, 2, 3, 4}, {1, 8, 27, 64}), 1.0, 1e-12);
  EXPECT_DOUBLE_EQ(mean_squared_error({1, 2}, {2, 4}), 2.5);
}

}  // namespace
}  // namespace hearth::train
