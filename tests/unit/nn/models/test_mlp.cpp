#include <gtest/gtest.h>

#include "hearth/autograd/grad_mode.h"
#include "hearth/core/generator.h"
#include "hearth/nn/models/mlp.h"
#include "hearth/ops/elementwise.h"
#include "hearth/ops/factory.h"
#include "hearth/ops/linalg.h"
#include "hearth/ops/nn_functional.h"
#include "hearth/ops/reduction.h"
#include "hearth/optim/adam.h"
#include "hearth/optim/lr_scheduler.h"
#include "hearth/optim/sgd.h"

namespace hearth {
namespace {

using nn::models::MLP;

std::vector<std::string> parameter_names(const nn::Module& m) {
  std::vector<std::string> out;
  for (const auto& [n, p] : m.named_parameters()) out.push_back(n);
  return out;
}

TEST(NnMlp, LayoutAndNames) {
  MLP mlp(784, {64, 32}, 10, 0.1);
  EXPECT_EQ(parameter_names(mlp), (std::vector<std::string>{"net.0.weight", "net.0.bias", "net.3.weight", "net.3.bias",
                                                            "net.6.weight", "net.6.bias"}));
  EXPECT_EQ(mlp.net->size(), 7u);  // Linear ReLU Dropout, twice, then Linear
  MLP plain(4, {8}, 2);
  EXPECT_EQ(parameter_names(plain),
            (std::vector<std::string>{"net.0.weight", "net.0.bias", "net.2.weight", "net.2.bias"}));
  MLP linear_only(4, {}, 2);
  EXPECT_EQ(linear_only.net->size(), 1u);
}

TEST(NnMlp, FlattensImagesAndChecksInputs) {
  MLP mlp(784, {16}, 10);
  EXPECT_EQ(mlp.forward(zeros({3, 1, 28, 28})).shape(), (Shape{3, 10}));
  EXPECT_EQ(mlp.forward(zeros({3, 784})).shape(), (Shape{3, 10}));
  EXPECT_THROW(mlp.forward(zeros({784})), ShapeError);
  EXPECT_THROW(mlp.forward(zeros({3, 100})), ShapeError);
  EXPECT_THROW(MLP(0, {4}, 2), ValueError);
  EXPECT_THROW(MLP(4, {0}, 2), ValueError);
  EXPECT_THROW(MLP(4, {4}, 2, 1.0), ValueError);
}

// A separable 3-class problem: the label is the argmax of a fixed projection.
struct Synthetic {
  Tensor x, y;
};
Synthetic make_problem() {
  Tensor x = randn({256, 8});
  Tensor w = randn({3, 8});
  return {x, argmax(linear(x, w), 1)};
}

double accuracy(MLP& mlp, const Synthetic& d) {
  NoGradGuard no_grad;
  return mean(cast(eq(argmax(mlp.forward(d.x), 1), d.y), DType::float32)).item<double>();
}

TEST(NnMlp, TrainingFiftyStepsLowersTheLoss) {
  manual_seed(7);
  Synthetic d = make_problem();
  MLP mlp(8, {32}, 3, 0.1);
  optim::AdamW opt(mlp.parameters(), {.lr = 1e-2});
  auto sched = optim::get_linear_schedule_with_warmup(opt, 5, 50);
  std::vector<double> losses;
  for (int step = 0; step < 50; ++step) {
    opt.zero_grad();
    Tensor loss = cross_entropy(mlp.forward(d.x), d.y);
    loss.backward();
    opt.step();
    sched->step();
    losses.push_back(loss.item<double>());
  }
  EXPECT_LT(losses.back(), 0.4 * losses.front()) << "first " << losses.front() << " last " << losses.back();
  mlp.eval();
  EXPECT_GT(accuracy(mlp, d), 0.9);
}

TEST(NnMlp, SgdWithMomentumAlsoLearns) {
  manual_seed(8);
  Synthetic d = make_problem();
  MLP mlp(8, {32}, 3);
  optim::SGD opt(mlp.parameters(), {.lr = 0.2, .momentum = 0.9, .nesterov = true});
  double first = 0, last = 0;
  for (int step = 0; step < 50; ++step) {
    opt.zero_grad();
    Tensor loss = cross_entropy(mlp.forward(d.x), d.y);
    loss.backward();
    opt.step();
    (step == 0 ? first : last) = loss.item<double>();
  }
  EXPECT_LT(last, 0.4 * first);
}

}  // namespace
}  // namespace hearth
