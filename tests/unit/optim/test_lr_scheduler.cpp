// Learning-rate schedules: PyTorch's StepLR (tests/fixtures/optim_reference.py)
// and Hugging Face's warm-up schedules, whose factors are written out below.
#include <cmath>

#include <gtest/gtest.h>

#include "hearth/ops/factory.h"
#include "hearth/optim/lr_scheduler.h"
#include "hearth/optim/sgd.h"

namespace hearth {
namespace {

using namespace optim;

std::vector<Tensor> one_param() {
  Tensor p = zeros({1});
  p.requires_grad_(true);
  return {p};
}

// The lr in force at steps 0..n-1, stepping the scheduler after each.
std::vector<double> lr_sequence(Optimizer& opt, LRScheduler& sched, int n) {
  std::vector<double> out;
  for (int i = 0; i < n; ++i) {
    out.push_back(opt.param_groups()[0].lr());
    EXPECT_DOUBLE_EQ(sched.get_last_lr()[0], out.back());
    sched.step();
  }
  return out;
}

void expect_seq(const std::vector<double>& got, const std::vector<double>& want) {
  ASSERT_EQ(got.size(), want.size());
  for (size_t i = 0; i < got.size(); ++i) EXPECT_NEAR(got[i], want[i], 1e-15) << "step " << i;
}

TEST(OptimLrScheduler, StepLRMatchesPyTorch) {
  SGD opt(one_param(), {.lr = 0.1});
  StepLR sched(opt, 3, 0.5);
  expect_seq(lr_sequence(opt, sched, 10), {0.1, 0.1, 0.1, 0.05, 0.05, 0.05, 0.025, 0.025, 0.025, 0.0125});
  EXPECT_EQ(sched.last_epoch(), 10);
  EXPECT_THROW(StepLR(opt, 0), ValueError);
}

TEST(OptimLrScheduler, ConstantSchedules) {
  SGD opt(one_param(), {.lr = 0.2});
  auto constant = get_scheduler("constant", opt, 5, 10);
  expect_seq(lr_sequence(opt, *constant, 3), {0.2, 0.2, 0.2});
  SGD opt2(one_param(), {.lr = 0.2});
  auto warm = get_scheduler("constant_with_warmup", opt2, 4, 10);
  // step / 4 for steps below 4, then 1.
  expect_seq(lr_sequence(opt2, *warm, 7), {0.0, 0.05, 0.1, 0.15, 0.2, 0.2, 0.2});
}

TEST(OptimLrScheduler, LinearWarmupThenDecayToZero) {
  SGD opt(one_param(), {.lr = 1.0});
  auto sched = get_linear_schedule_with_warmup(opt, 2, 10);
  // Warm-up: 0, 1/2; then (10 - s) / 8, clamped at 0 past the end.
  expect_seq(lr_sequence(opt, *sched, 12),
             {0.0, 0.5, 1.0, 7.0 / 8, 6.0 / 8, 5.0 / 8, 4.0 / 8, 3.0 / 8, 2.0 / 8, 1.0 / 8, 0.0, 0.0});
  // No warm-up starts at the full rate.
  SGD opt2(one_param(), {.lr = 1.0});
  auto no_warm = get_scheduler("linear", opt2, 0, 4);
  expect_seq(lr_sequence(opt2, *no_warm, 5), {1.0, 0.75, 0.5, 0.25, 0.0});
}

TEST(OptimLrScheduler, CosineWarmupThenHalfCosine) {
  SGD opt(one_param(), {.lr = 2.0});
  auto sched = get_scheduler("cosine", opt, 2, 6);
  std::vector<double> want = {0.0, 1.0};
  for (int s = 2; s < 8; ++s) {
    const double progress = (s - 2) / 4.0;
    want.push_back(2.0 * std::max(0.0, 0.5 * (1 + std::cos(M_PI * progress))));
  }
  expect_seq(lr_sequence(opt, *sched, 8), want);
  EXPECT_NEAR(want[4], 1.0, 1e-15);  // halfway through the decay
  EXPECT_NEAR(want[6], 0.0, 1e-15);  // the end
}

TEST(OptimLrScheduler, CosineWithHardRestarts) {
  SGD opt(one_param(), {.lr = 1.0});
  auto one_cycle = get_scheduler("cosine_with_restarts", opt, 1, 5);
  // One cycle (the name's default): the plain half cosine, 0 at the end.
  std::vector<double> want = {0.0};
  for (int s = 1; s < 7; ++s) want.push_back(s >= 5 ? 0.0 : 0.5 * (1 + std::cos(M_PI * (s - 1) / 4.0)));
  expect_seq(lr_sequence(opt, *one_cycle, 7), want);
  // Two cycles over 8 steps: back to the full rate at step 4.
  SGD opt2(one_param(), {.lr = 1.0});
  auto two = get_cosine_with_hard_restarts_schedule_with_warmup(opt2, 0, 8, 2);
  std::vector<double> got = lr_sequence(opt2, *two, 9);
  EXPECT_NEAR(got[0], 1.0, 1e-15);
  EXPECT_NEAR(got[2], 0.5, 1e-15);
  EXPECT_NEAR(got[4], 1.0, 1e-15);
  EXPECT_NEAR(got[6], 0.5, 1e-15);
  EXPECT_NEAR(got[8], 0.0, 1e-15);
}

TEST(OptimLrScheduler, PolynomialDecayToLrEnd) {
  SGD opt(one_param(), {.lr = 1.0});
  auto linear = get_scheduler("polynomial", opt, 2, 6);
  // Power 1 from 1 down to 1e-7 over steps 2..6, then 1e-7.
  std::vector<double> want = {0.0, 0.5};
  for (int s = 2; s <= 6; ++s) want.push_back((1.0 - 1e-7) * (1.0 - (s - 2) / 4.0) + 1e-7);
  want.push_back(1e-7);
  expect_seq(lr_sequence(opt, *linear, 8), want);
  SGD opt2(one_param(), {.lr = 2.0});
  auto squared = get_polynomial_decay_schedule_with_warmup(opt2, 0, 4, 0.5, 2.0);
  expect_seq(lr_sequence(opt2, *squared, 3), {2.0, 1.5 * 0.5625 + 0.5, 1.5 * 0.25 + 0.5});
  // A learning rate at or below lr_end cannot decay to it.
  SGD opt3(one_param(), {.lr = 1e-8});
  EXPECT_THROW(get_scheduler("polynomial", opt3, 0, 4), ValueError);
}

TEST(OptimLrScheduler, PerGroupLambdasAndBaseRates) {
  Tensor a = zeros({1}), b = zeros({1});
  a.requires_grad_(true);
  b.requires_grad_(true);
  SGD opt({ParamGroup{{a}, {{"lr", 1.0}}}, ParamGroup{{b}, {{"lr", 0.1}}}}, {});
  LambdaLR sched(opt, std::vector<LambdaLR::Lambda>{[](int64_t s) { return 1.0 / (s + 1); },
                                                    [](int64_t s) { return static_cast<double>(s); }});
  EXPECT_EQ(sched.base_lrs(), (std::vector<double>{1.0, 0.1}));
  EXPECT_DOUBLE_EQ(opt.param_groups()[1].get("initial_lr"), 0.1);
  sched.step();
  sched.step();
  EXPECT_DOUBLE_EQ(opt.param_groups()[0].lr(), 1.0 / 3);
  EXPECT_DOUBLE_EQ(opt.param_groups()[1].lr(), 0.2);
  EXPECT_THROW(LambdaLR(opt, std::vector<LambdaLR::Lambda>{[](int64_t) { return 1.0; }}), ValueError);
}

TEST(OptimLrScheduler, StateRestoresTheStepAndTheRates) {
  SGD opt(one_param(), {.lr = 1.0});
  auto sched = get_linear_schedule_with_warmup(opt, 2, 10);
  for (int i = 0; i < 5; ++i) sched->step();
  const nlohmann::json state = sched->state_dict();
  EXPECT_EQ(state["last_epoch"], 5);

  // Resuming: a fresh optimizer and scheduler, then the saved state.
  SGD opt2(one_param(), {.lr = 1.0});
  auto resumed = get_linear_schedule_with_warmup(opt2, 2, 10);
  resumed->load_state_dict(state);
  EXPECT_EQ(resumed->last_epoch(), 5);
  EXPECT_DOUBLE_EQ(opt2.param_groups()[0].lr(), 5.0 / 8);
  for (int i = 0; i < 3; ++i) {
    sched->step();
    resumed->step();
    EXPECT_DOUBLE_EQ(opt2.param_groups()[0].lr(), opt.param_groups()[0].lr());
  }
  EXPECT_THROW(resumed->load_state_dict(nlohmann::json::object()), ValueError);
}

TEST(OptimLrScheduler, UnknownNamesAndBadStepCounts) {
  SGD opt(one_param(), {.lr = 1.0});
  try {
    get_scheduler("polynomial_decay_x", opt, 0, 10);
    FAIL() << "expected ValueError";
  } catch (const ValueError& e) {
    EXPECT_NE(std::string(e.what()).find("constant_with_warmup"), std::string::npos) << e.what();
  }
  EXPECT_THROW(get_linear_schedule_with_warmup(opt, -1, 10), ValueError);
  EXPECT_THROW(get_cosine_schedule_with_warmup(opt, 0, -5), ValueError);
}

}  // namespace
}  // namespace hearth
