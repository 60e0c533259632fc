#include <cmath>

#include <gtest/gtest.h>

#include "hearth/core/errors.h"
#include "hearth/ops/factory.h"
#include "hearth/train/metrics.h"

namespace hearth::train {
namespace {

double cross_entropy_of(const std::vector<double>& logits, int64_t label) {
  double m = logits[0];
  for (double v : logits) m = std::max(m, v);
  double s = 0;
  for (double v : logits) s += std::exp(v - m);
  return -(logits[static_cast<size_t>(label)] - m - std::log(s));
}

TEST(ClassificationMetrics, LossAndAccuracyOverSeveralBatches) {
  ClassificationMetrics m;
  // Batch 1: predictions 2, 0; labels 2, 1. Batch 2: prediction 1; label 1.
  m.update(tensor(std::vector<float>{0, 1, 3, 2, 1, 0}, {2, 3}), tensor(std::vector<int64_t>{2, 1}, {2}));
  m.update(tensor(std::vector<float>{0, 5, 1}, {1, 3}), tensor(std::vector<int64_t>{1}, {1}));
  EXPECT_EQ(m.num_samples(), 3);
  Metrics r = m.compute();
  double loss = (cross_entropy_of({0, 1, 3}, 2) + cross_entropy_of({2, 1, 0}, 1) + cross_entropy_of({0, 5, 1}, 1)) / 3;
  EXPECT_NEAR(r.at("eval_loss"), loss, 1e-6);
  EXPECT_DOUBLE_EQ(r.at("eval_accuracy"), 2.0 / 3.0);
  EXPECT_EQ(r.count("eval_f1"), 0u);
  EXPECT_EQ(m.compute("test_").count("test_accuracy"), 1u);
}

// bfloat16 logits (a recorded bf16-mixed forward hands them over outside
// autocast) give the loss of their values in float32, not one summed in
// bfloat16, which keeps ~3 digits.
TEST(ClassificationMetrics, HalfPrecisionLogitsGiveTheirFloat32Loss) {
  std::vector<float> values;
  std::vector<int64_t> labels;
  std::vector<double> expected_terms;
  for (int i = 0; i < 64; ++i) {
    std::vector<double> row;
    for (int c = 0; c < 3; ++c) {
      // Values bfloat16 holds exactly, so the reference sees what the tensor holds.
      const float v = static_cast<float>((i * 7 + c * 13) % 17) / 8.0f - 1.0f;
      values.push_back(v);
      row.push_back(v);
    }
    labels.push_back(i % 3);
    expected_terms.push_back(cross_entropy_of(row, i % 3));
  }
  ClassificationMetrics m;
  m.update(tensor(values, {64, 3}).to(DType::bfloat16), tensor(labels, {64}));
  double expected = 0;
  for (double t : expected_terms) expected += t;
  EXPECT_NEAR(m.compute().at("eval_loss"), expected / 64, 1e-6);
}

TEST(ClassificationMetrics, BinaryTasksAlsoReportF1) {
  ClassificationMetrics m;
  // predictions 1, 1, 0, 0 against labels 1, 0, 1, 0: tp 1, fp 1, fn 1.
  m.update(tensor(std::vector<double>{0, 1, 0, 1, 1, 0, 1, 0}, {4, 2}), tensor(std::vector<int64_t>{1, 0, 1, 0}, {4}));
  Metrics r = m.compute();
  EXPECT_DOUBLE_EQ(r.at("eval_accuracy"), 0.5);
  EXPECT_DOUBLE_EQ(r.at("eval_f1"), 0.5);
  EXPECT_DOUBLE_EQ(f1_score(3, 1, 0), 6.0 / 7.0);
  EXPECT_DOUBLE_EQ(f1_score(0, 0, 0), 0.0);
}

TEST(ClassificationMetrics, NoSamplesGiveNoMetrics) {
  ClassificationMetrics m;
  EXPECT_TRUE(m.compute().empty());
  m.update(Tensor::empty({0, 3}), Tensor::empty({0}, DType::int64));
  EXPECT_TRUE(m.compute().empty());
}

TEST(ClassificationMetrics, RejectsBadShapes) {
  ClassificationMetrics m;
  EXPECT_THROW(m.update(Tensor::empty({4}), Tensor::empty({4}, DType::int64)), ShapeError);
  EXPECT_THROW(m.update(Tensor::empty({4, 3}), Tensor::empty({3}, DType::int64)), ShapeError);
  EXPECT_THROW(m.update(Tensor::empty({4, 3}), Tensor::empty({4}, DType::float32)), ShapeError);
  m.update(zeros({2, 3}), zeros({2}, DType::int64));
  try {
    m.update(zeros({2, 4}), zeros({2}, DType::int64));
    FAIL() << "a change of class count must throw";
  } catch (const ShapeError& e) {
    EXPECT_NE(std::string(e.what()).find("expected 3 classes"), std::string::npos);
  }
}

}  // namespace
}  // namespace hearth::train
