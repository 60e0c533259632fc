// GradScaler: loss scaling, unscaling, skipped steps on inf/NaN gradients,
// the dynamic scale, misuse errors, and the state a checkpoint keeps.
#include <cmath>
#include <functional>
#include <limits>
#include <memory>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "hearth/ops/autocast.h"
#include "hearth/ops/elementwise.h"
#include "hearth/ops/factory.h"
#include "hearth/ops/linalg.h"
#include "hearth/ops/reduction.h"
#include "hearth/optim/clip_grad.h"
#include "hearth/optim/grad_scaler.h"
#include "hearth/optim/sgd.h"

namespace hearth::optim {
namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();

struct Problem {
  Tensor p0 = tensor({1.0f, 2.0f});
  Tensor p1 = tensor({-1.0f});
  std::unique_ptr<SGD> opt;
  Problem() {
    p0.requires_grad_();
    p1.requires_grad_();
    opt = std::make_unique<SGD>(std::vector<Tensor>{p0, p1}, SGDOptions{.lr = 1.0});
  }
  // Gradients as backward of a loss scaled by `scale` would leave them.
  void set_grads(double g0, double g1, double scale) {
    p0.set_grad(tensor({static_cast<float>(g0 * scale), static_cast<float>(-g0 * scale)}));
    p1.set_grad(tensor({static_cast<float>(g1 * scale)}));
  }
};

template <typename E>
void expect_error(const std::function<void()>& f, const std::string& text) {
  try {
    f();
    FAIL() << "expected an error containing: " << text;
  } catch (const E& e) {
    EXPECT_NE(std::string(e.what()).find(text), std::string::npos) << e.what();
  }
}

TEST(GradScaler, ScalesTheLossAndItsGradients) {
  GradScaler scaler;
  EXPECT_EQ(scaler.get_scale(), 65536.0);
  Tensor w = tensor({3.0f});
  w.requires_grad_();
  Tensor loss = sum(mul(w, w));
  Tensor scaled = scaler.scale(loss);
  EXPECT_EQ(scaled.item<double>(), 9.0 * 65536.0);
  scaled.backward();
  EXPECT_EQ(w.grad().item<double>(), 6.0 * 65536.0);
}

TEST(GradScaler, UnscalesAndStepsWhenGradientsAreFinite) {
  Problem pb;
  GradScaler scaler;
  pb.set_grads(0.5, 0.25, scaler.get_scale());
  EXPECT_TRUE(scaler.step(*pb.opt));
  EXPECT_FALSE(scaler.found_inf(*pb.opt));
  // lr 1: the parameters move by exactly the unscaled gradients.
  EXPECT_EQ(pb.p0.to_vector<float>(), (std::vector<float>{0.5f, 2.5f}));
  EXPECT_EQ(pb.p1.to_vector<float>(), (std::vector<float>{-1.25f}));
  scaler.update();
  EXPECT_EQ(scaler.get_scale(), 65536.0);
  EXPECT_EQ(scaler.growth_tracker(), 1);
}

TEST(GradScaler, SkipsTheStepAndBacksOffOnInfOrNan) {
  for (double bad : {kInf, -kInf, std::nan("")}) {
    Problem pb;
    GradScaler scaler;
    pb.set_grads(0.5, bad, 1.0);
    EXPECT_FALSE(scaler.step(*pb.opt));
    EXPECT_TRUE(scaler.found_inf(*pb.opt));
    EXPECT_EQ(pb.p0.to_vector<float>(), (std::vector<float>{1.0f, 2.0f})) << "the step must be skipped";
    EXPECT_EQ(pb.p1.to_vector<float>(), (std::vector<float>{-1.0f}));
    scaler.update();
    EXPECT_EQ(scaler.get_scale(), 32768.0);
    EXPECT_EQ(scaler.growth_tracker(), 0);
  }
}

TEST(GradScaler, GrowsAfterGrowthIntervalGoodStepsInARow) {
  Problem pb;
  GradScaler scaler(GradScalerOptions{.init_scale = 8.0, .growth_interval = 3});
  auto run_step = [&](double g1) {
    pb.set_grads(0.0, g1, scaler.get_scale());
    scaler.step(*pb.opt);
    scaler.update();
  };
  run_step(0.0);
  run_step(0.0);
  run_step(kInf);  // resets the count and halves
  EXPECT_EQ(scaler.get_scale(), 4.0);
  run_step(0.0);
  run_step(0.0);
  EXPECT_EQ(scaler.get_scale(), 4.0);
  EXPECT_EQ(scaler.growth_tracker(), 2);
  run_step(0.0);
  EXPECT_EQ(scaler.get_scale(), 8.0);
  EXPECT_EQ(scaler.growth_tracker(), 0);
}

TEST(GradScaler, UnscaleBeforeClippingClipsTheTrueGradients) {
  Problem pb;
  GradScaler scaler;
  pb.set_grads(3.0, 4.0 * std::sqrt(2.0), scaler.get_scale());  // true norm sqrt(9 + 9 + 32) = sqrt(50)
  scaler.unscale_(*pb.opt);
  Tensor norm = clip_grad_norm_({pb.p0, pb.p1}, 1.0);
  EXPECT_NEAR(norm.item<double>(), std::sqrt(50.0), 1e-4);
  EXPECT_TRUE(scaler.step(*pb.opt));  // does not unscale a second time
  const double c = 1.0 / (std::sqrt(50.0) + 1e-6);
  EXPECT_NEAR(pb.p0.to_vector<float>()[0], 1.0 - 3.0 * c, 1e-5);
  EXPECT_NEAR(pb.p1.to_vector<float>()[0], -1.0 - 4.0 * std::sqrt(2.0) * c, 1e-5);
  scaler.update();
}

TEST(GradScaler, LossScalingKeepsSmallFloat16GradientsAlive) {
  // d loss / d w = x * 1e-4 = 1e-8: below float16's smallest subnormal (6e-8)
  // when the product's backward runs in float16, unless the loss is scaled.
  auto grad_of_w = [](GradScaler* scaler) {
    Tensor w = tensor({1.0f}).reshape({1, 1});
    w.requires_grad_();
    Tensor x = tensor({1e-4f}).reshape({1, 1});
    Tensor loss;
    {
      AutocastGuard autocast(kCpu, DType::float16);
      loss = mul(sum(matmul(x, w)), 1e-4);
    }
    (scaler != nullptr ? scaler->scale(loss) : loss).backward();
    if (scaler != nullptr) {
      SGD opt({w}, SGDOptions{.lr = 0.0});
      scaler->unscale_(opt);
    }
    return w.grad().item<double>();
  };
  EXPECT_EQ(grad_of_w(nullptr), 0.0);
  GradScaler scaler;
  EXPECT_NEAR(grad_of_w(&scaler), 1e-8, 1e-10);
}

TEST(GradScaler, RefusesMisuse) {
  Problem pb;
  GradScaler scaler;
  expect_error<ValueError>([&] { scaler.update(); }, "update() was called without a step() or unscale_()");
  pb.set_grads(1, 1, 1);
  scaler.unscale_(*pb.opt);
  expect_error<ValueError>([&] { scaler.unscale_(*pb.opt); }, "unscale_() was already called on this optimizer");
  scaler.step(*pb.opt);
  expect_error<ValueError>([&] { scaler.step(*pb.opt); }, "step() was already called on this optimizer");
  expect_error<ValueError>([&] { scaler.unscale_(*pb.opt); }, "unscale_() was already called");
  scaler.update();
  pb.set_grads(1, 1, 1);
  scaler.step(*pb.opt);  // a new step after update() is fine
  scaler.update();
}

TEST(GradScaler, RefusesBadOptions) {
  expect_error<ValueError>([] { GradScaler s(GradScalerOptions{.init_scale = 0}); }, "field 'init_scale'");
  expect_error<ValueError>([] { GradScaler s(GradScalerOptions{.growth_factor = 1.0}); }, "field 'growth_factor'");
  expect_error<ValueError>([] { GradScaler s(GradScalerOptions{.backoff_factor = 1.0}); }, "field 'backoff_factor'");
  expect_error<ValueError>([] { GradScaler s(GradScalerOptions{.growth_interval = 0}); }, "field 'growth_interval'");
}

TEST(GradScaler, StateDictRoundTrip) {
  Problem pb;
  GradScaler a(GradScalerOptions{.init_scale = 1024.0, .growth_factor = 4.0, .growth_interval = 5});
  for (double g1 : {kInf, 0.0, 0.0}) {
    pb.set_grads(0, g1, a.get_scale());
    a.step(*pb.opt);
    a.update();
  }
  nlohmann::json state = a.state_dict();
  EXPECT_EQ(state["scale"], 512.0);
  EXPECT_EQ(state["growth_tracker"], 2);
  GradScaler b;
  b.load_state_dict(nlohmann::json::parse(state.dump()));
  EXPECT_EQ(b.get_scale(), 512.0);
  EXPECT_EQ(b.growth_tracker(), 2);
  EXPECT_EQ(b.options().growth_factor, 4.0);
  EXPECT_EQ(b.options().growth_interval, 5);
  EXPECT_EQ(b.state_dict(), state);
  // The same schedule from here: three more good steps reach the interval.
  for (GradScaler* s : {&a, &b}) {
    for (int i = 0; i < 3; ++i) {
      pb.set_grads(0, 0, s->get_scale());
      s->step(*pb.opt);
      s->update();
    }
  }
  EXPECT_EQ(a.get_scale(), 2048.0);
  EXPECT_EQ(b.get_scale(), 2048.0);
}

TEST(GradScaler, LoadStateDictNamesABadField) {
  GradScaler s;
  nlohmann::json good = s.state_dict();
  nlohmann::json bad = good;
  bad["scale"] = -1.0;
  expect_error<ValueError>([&] { s.load_state_dict(bad); }, "field 'scale'");
  bad = good;
  bad.erase("growth_tracker");
  expect_error<ValueError>([&] { s.load_state_dict(bad); }, "field 'growth_tracker': expected an integer");
  bad = good;
  bad["growth_tracker"] = 2000;
  expect_error<ValueError>([&] { s.load_state_dict(bad); }, "in [0, growth_interval)");
  expect_error<ValueError>([&] { s.load_state_dict(nlohmann::json::array()); }, "expected a JSON object");
  EXPECT_EQ(s.state_dict(), good);  // a refused load changes nothing
}

TEST(GradScaler, DisabledPassesEverythingThrough) {
  Problem pb;
  GradScaler scaler(GradScalerOptions{.enabled = false});
  Tensor loss = tensor({2.0f});
  EXPECT_TRUE(scaler.scale(loss).is_same(loss));
  pb.set_grads(0.5, kInf, 1.0);
  EXPECT_TRUE(scaler.step(*pb.opt));  // no check: the caller asked for none
  scaler.update();
  EXPECT_EQ(pb.p0.to_vector<float>(), (std::vector<float>{0.5f, 2.5f}));
}

}  // namespace
}  // namespace hearth::optim
