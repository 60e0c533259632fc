// run_glue's metric per GLUE task (examples/run_glue/glue_metrics.h), against
// values worked out by hand.
#include <gtest/gtest.h>

#include "examples/run_glue/glue_metrics.h"
#include "hearth/core/errors.h"
#include "hearth/ops/factory.h"

namespace run_glue {
namespace {

using hearth::tensor;
using hearth::Tensor;
using hearth::ValueError;
using hearth::train::Metrics;

TEST(GlueMetrics, PerTaskCombinations) {
  Tensor logits =
      tensor(std::vector<float>{0.1f, 0.9f, 0.8f, 0.2f, 0.3f, 0.7f, 0.6f, 0.4f}, {4, 2});  // predicts 1 0 1 0
  Tensor labels = tensor(std::vector<int64_t>{1, 1, 0, 0}, {4});
  Metrics mrpc = glue_metrics("mrpc", false, logits, labels);
  EXPECT_DOUBLE_EQ(mrpc.at("accuracy"), 0.5);
  EXPECT_DOUBLE_EQ(mrpc.at("f1"), 0.5);
  EXPECT_DOUBLE_EQ(mrpc.at("combined_score"), 0.5);
  Metrics rte = glue_metrics("rte", false, logits, labels);
  EXPECT_EQ(rte.size(), 1u);
  EXPECT_DOUBLE_EQ(rte.at("accuracy"), 0.5);
  Metrics cola = glue_metrics("cola", false, logits, labels);
  EXPECT_EQ(cola.size(), 1u);
  EXPECT_DOUBLE_EQ(cola.at("matthews_correlation"), 0.0);

  Tensor scores = tensor(std::vector<float>{0.5f, 1.5f, 1.0f, 4.0f}, {4, 1});
  Tensor gold = tensor(std::vector<float>{1.0f, 3.0f, 2.0f, 5.0f}, {4});
  Metrics stsb = glue_metrics("stsb", true, scores, gold);
  EXPECT_NEAR(stsb.at("spearmanr"), 1.0, 1e-12);
  EXPECT_GT(stsb.at("pearson"), 0.9);
  EXPECT_NEAR(stsb.at("combined_score"), (stsb.at("pearson") + 1.0) / 2.0, 1e-12);
  Metrics mse = glue_metrics("", true, scores, gold);
  EXPECT_NEAR(mse.at("mse"), (0.25 + 2.25 + 1.0 + 1.0) / 4.0, 1e-6);
  EXPECT_EQ(glue_metrics("", false, logits, labels).count("accuracy"), 1u);
  EXPECT_THROW(glue_metrics("stsb", false, logits, labels), ValueError);
}

}  // namespace
}  // namespace run_glue
