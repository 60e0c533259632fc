// Anomaly detection: the first op, forward or backward, that produces NaN or
// Inf is named with its shapes; off, nothing is checked.
#include <cmath>
#include <functional>
#include <limits>

#include <gtest/gtest.h>

#include "hearth/autograd/anomaly_mode.h"
#include "hearth/core/errors.h"
#include "hearth/ops/elementwise.h"
#include "hearth/ops/factory.h"
#include "hearth/ops/reduction.h"

namespace hearth::autograd {
namespace {

std::string message_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const NonFiniteError& e) {
    return e.what();
  }
  return "";
}

TEST(AnomalyMode, OffByDefaultAndNonFiniteValuesPassThrough) {
  EXPECT_FALSE(is_anomaly_enabled());
  Tensor y = log(zeros({2, 3}));
  EXPECT_TRUE(std::isinf(y.to_vector<float>()[0]));
}

TEST(AnomalyMode, ForwardNamesTheFirstOpAndItsShapes) {
  DetectAnomalyGuard anomaly;
  Tensor x = tensor(std::vector<float>{1, 0, 2, 3, 4, 5}, {2, 3});
  Tensor a = mul(x, 2.0);  // finite: passes
  std::string msg = message_of([&] { (void)log(a); });
  ASSERT_FALSE(msg.empty()) << "log(0) was not caught";
  EXPECT_NE(msg.find("[detect_anomaly] op 'log' in the forward pass"), std::string::npos) << msg;
  EXPECT_NE(msg.find("1 infinite"), std::string::npos) << msg;
  EXPECT_NE(msg.find("flat index 1"), std::string::npos) << msg;
  EXPECT_NE(msg.find("inputs: [2, 3] float32 on cpu"), std::string::npos) << msg;
  EXPECT_EQ(msg.find("already held"), std::string::npos) << msg;
}

TEST(AnomalyMode, BackwardNamesTheGraphNodeWhoseFormulaProducedIt) {
  Tensor x = zeros({3}).requires_grad_();
  Tensor loss;
  {
    DetectAnomalyGuard anomaly;
    loss = sum(sqrt(x));  // sqrt(0) = 0 is finite; its gradient 1/(2 sqrt(0)) is not
    std::string msg = message_of([&] { loss.backward(); });
    ASSERT_FALSE(msg.empty()) << "the infinite gradient was not caught";
    EXPECT_NE(msg.find("in the backward pass, inside SqrtBackward"), std::string::npos) << msg;
    EXPECT_NE(msg.find("[3] float32"), std::string::npos) << msg;
  }
}

TEST(AnomalyMode, SaysWhenTheValuesCameInAlreadyBroken) {
  Tensor data = tensor(std::vector<float>{1, std::numeric_limits<float>::quiet_NaN()}, {2});  // e.g. a bad file
  DetectAnomalyGuard anomaly;
  std::string msg = message_of([&] { (void)add(data, 1.0); });
  EXPECT_NE(msg.find("op 'add'"), std::string::npos) << msg;
  EXPECT_NE(msg.find("1 NaN"), std::string::npos) << msg;
  EXPECT_NE(msg.find("Input 0 already held non-finite values"), std::string::npos) << msg;
}

TEST(AnomalyMode, GuardsNestAndRestore) {
  {
    DetectAnomalyGuard on;
    EXPECT_TRUE(is_anomaly_enabled());
    {
      DetectAnomalyGuard off(false);
      EXPECT_FALSE(is_anomaly_enabled());
      EXPECT_NO_THROW((void)log(zeros({1})));
    }
    EXPECT_TRUE(is_anomaly_enabled());
    EXPECT_THROW((void)log(zeros({1})), NonFiniteError);
  }
  EXPECT_FALSE(is_anomaly_enabled());
}

TEST(AnomalyMode, IntegerOutputsAndFiniteGraphsPass) {
  DetectAnomalyGuard anomaly;
  Tensor x = tensor(std::vector<float>{0.5f, 1.5f, 2.5f}, {3}).requires_grad_();
  Tensor loss = sum(mul(x, x));
  EXPECT_NO_THROW(loss.backward());
  EXPECT_NO_THROW((void)argmax(x.detach(), 0));
}

}  // namespace
}  // namespace hearth::autograd
