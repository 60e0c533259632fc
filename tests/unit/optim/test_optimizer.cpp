// The Optimizer base: parameter groups, zero_grad, and state save/restore.
#include <gtest/gtest.h>

#include "hearth/autograd/grad_mode.h"
#include "hearth/io/safetensors.h"
#include "hearth/ops/elementwise.h"
#include "hearth/ops/factory.h"
#include "hearth/optim/adam.h"
#include "hearth/optim/sgd.h"
#include "tests/support/temp_dir.h"
#include "tests/unit/optim/optim_testing.h"

namespace hearth {
namespace {

using optim::Adam;
using optim::AdamW;
using optim::OptimizerStateDict;
using optim::ParamGroup;
using optim::SGD;

TEST(OptimOptimizer, GroupsTakeTheirOwnOptionsAndDefaults) {
  std::vector<Tensor> params = testing::reference_params();
  SGD opt({ParamGroup{{params[0]}, {}}, ParamGroup{{params[1]}, {{"lr", 1.0}, {"extra", 7}}}}, {.lr = 0.1});
  ASSERT_EQ(opt.param_groups().size(), 2u);
  EXPECT_DOUBLE_EQ(opt.param_groups()[0].lr(), 0.1);
  EXPECT_DOUBLE_EQ(opt.param_groups()[1].lr(), 1.0);
  EXPECT_DOUBLE_EQ(opt.param_groups()[1].get("momentum"), 0.0);  // filled from the defaults
  EXPECT_DOUBLE_EQ(opt.param_groups()[1].get("extra"), 7.0);     // extra keys are kept
  EXPECT_THROW(opt.param_groups()[0].get("no_such_option"), ValueError);
  params[0].set_grad(ones({2, 2}, DType::float64));
  params[1].set_grad(ones({3}, DType::float64));
  opt.step();
  testing::expect_values(params[0], {0.4, -1.1, 1.4, 1.9}, 1e-15, "p0 (lr 0.1)");
  testing::expect_values(params[1], {-0.9, -1.2, -0.7}, 1e-15, "p1 (lr 1)");
  // Changing a group's lr takes effect at the next step.
  opt.param_groups()[0].set_lr(0.0);
  opt.step();
  testing::expect_values(params[0], {0.4, -1.1, 1.4, 1.9}, 1e-15, "p0 (lr 0)");
}

TEST(OptimOptimizer, AddParamGroupRejectsDuplicatesAndBadTensors) {
  std::vector<Tensor> params = testing::reference_params();
  SGD opt({params[0]}, {.lr = 0.1});
  try {
    opt.add_param_group(ParamGroup{{params[0]}, {}});
    FAIL() << "expected ValueError";
  } catch (const ValueError& e) {
    EXPECT_NE(std::string(e.what()).find("another group"), std::string::npos) << e.what();
  }
  EXPECT_THROW(opt.add_param_group(ParamGroup{{params[1], params[1]}, {}}), ValueError);
  EXPECT_THROW(opt.add_param_group(ParamGroup{{zeros({2}, DType::int64)}, {}}), TypeError);
  EXPECT_THROW(opt.add_param_group(ParamGroup{{mul(params[1], 2.0)}, {}}), ValueError);  // not a leaf
  EXPECT_THROW(opt.add_param_group(ParamGroup{{params[1]}, {{"lr", -1.0}}}), ValueError);
  opt.add_param_group(ParamGroup{{params[1]}, {{"lr", 0.5}}});
  EXPECT_EQ(opt.param_groups().size(), 2u);
  EXPECT_THROW(SGD(std::vector<ParamGroup>{}, {}), ValueError);
}

TEST(OptimOptimizer, ZeroGradDropsOrZeroesGradients) {
  std::vector<Tensor> params = testing::reference_params();
  Adam opt(params);
  testing::set_reference_grads(params, 0);
  opt.zero_grad(false);
  ASSERT_TRUE(params[0].grad().defined());
  testing::expect_values(params[0].grad(), {0, 0, 0, 0}, 0, "zeroed grad");
  opt.zero_grad();
  EXPECT_FALSE(params[0].grad().defined());
  EXPECT_FALSE(params[1].grad().defined());
}

std::vector<Tensor> two_group_params() { return testing::reference_params(); }

// AdamW over two groups, the second without weight decay (as the Trainer
// exempts biases).
std::unique_ptr<AdamW> make_two_group_adamw(const std::vector<Tensor>& p) {
  return std::make_unique<AdamW>(
      std::vector<ParamGroup>{ParamGroup{{p[0]}, {}}, ParamGroup{{p[1]}, {{"weight_decay", 0.0}}}},
      optim::AdamWOptions{.lr = 0.1, .amsgrad = true});
}

TEST(OptimOptimizer, StateDictNamesTensorsAndScalarsLikePyTorch) {
  std::vector<Tensor> p = two_group_params();
  auto opt = make_two_group_adamw(p);
  testing::set_reference_grads(p, 0);
  opt->step();
  OptimizerStateDict sd = opt->state_dict();
  EXPECT_EQ(sd.meta["optimizer"], "AdamW");
  EXPECT_EQ(sd.meta["state"]["0"]["step"], 1);
  EXPECT_EQ(sd.meta["state"]["1"]["step"], 1);
  EXPECT_EQ(sd.meta["param_groups"].size(), 2u);
  EXPECT_EQ(sd.meta["param_groups"][0]["params"], nlohmann::json::array({0}));
  EXPECT_EQ(sd.meta["param_groups"][1]["params"], nlohmann::json::array({1}));
  EXPECT_DOUBLE_EQ(sd.meta["param_groups"][1]["weight_decay"].get<double>(), 0.0);
  EXPECT_DOUBLE_EQ(sd.meta["param_groups"][0]["weight_decay"].get<double>(), 0.01);
  for (const char* name : {"state.0.exp_avg", "state.0.exp_avg_sq", "state.0.max_exp_avg_sq", "state.1.exp_avg",
                           "state.1.exp_avg_sq", "state.1.max_exp_avg_sq"})
    EXPECT_EQ(sd.tensors.count(name), 1u) << name;
  EXPECT_EQ(sd.tensors.size(), 6u);
  EXPECT_EQ(sd.tensors.at("state.0.exp_avg").shape(), (Shape{2, 2}));
}

TEST(OptimOptimizer, SavedStateThroughSafetensorsContinuesIdentically) {
  testing::TempDir dir;
  // Uninterrupted: three steps.
  std::vector<Tensor> a = two_group_params();
  auto opt_a = make_two_group_adamw(a);
  for (int t = 0; t < 3; ++t) {
    testing::set_reference_grads(a, t);
    opt_a->step();
  }
  // Interrupted after two steps, saved, and restored into fresh objects.
  std::vector<Tensor> b = two_group_params();
  auto opt_b = make_two_group_adamw(b);
  for (int t = 0; t < 2; ++t) {
    testing::set_reference_grads(b, t);
    opt_b->step();
  }
  opt_b->param_groups()[0].set_lr(0.1);  // unchanged, but written back on load
  OptimizerStateDict sd = opt_b->state_dict();
  const std::string path = dir.file("optimizer.safetensors");
  io::save_safetensors(path, sd.tensors, {{"optimizer", sd.meta.dump()}});
  std::vector<Tensor> weights = {b[0].detach().clone(), b[1].detach().clone()};

  std::vector<Tensor> c = two_group_params();
  {
    NoGradGuard no_grad;
    copy_(c[0], weights[0]);
    copy_(c[1], weights[1]);
  }
  auto opt_c = make_two_group_adamw(c);
  io::SafetensorsFile file(path);
  OptimizerStateDict loaded{io::load_safetensors(path), nlohmann::json::parse(file.metadata().at("optimizer"))};
  opt_c->load_state_dict(loaded);
  EXPECT_EQ(opt_c->state(c[0])->step, 2);
  testing::set_reference_grads(c, 2);
  opt_c->step();
  EXPECT_EQ(c[0].to_vector<double>(), a[0].to_vector<double>());
  EXPECT_EQ(c[1].to_vector<double>(), a[1].to_vector<double>());
}

TEST(OptimOptimizer, LoadedStateIsOwnedAndCastToTheParameters) {
  Tensor p = zeros({2});  // float32
  p.requires_grad_(true);
  SGD opt({p}, {.lr = 1.0, .momentum = 0.5});
  Tensor buffer = tensor(std::vector<double>{1.0, 2.0});  // float64
  OptimizerStateDict sd;
  sd.tensors["state.0.momentum_buffer"] = buffer;
  sd.meta = nlohmann::json::parse(R"({"state": {"0": {"step": 0}},
                                      "param_groups": [{"lr": 0.5, "momentum": 0.5, "params": [0]}]})");
  opt.load_state_dict(sd);
  const Tensor& b = opt.state(p)->tensors.at("momentum_buffer");
  EXPECT_EQ(b.dtype(), DType::float32);
  EXPECT_FALSE(b.storage() == buffer.storage());
  EXPECT_DOUBLE_EQ(opt.param_groups()[0].lr(), 0.5);
  EXPECT_DOUBLE_EQ(opt.param_groups()[0].get("dampening"), 0.0);  // kept: the state lacks it
  p.set_grad(ones({2}));
  opt.step();  // buf = 0.5 * buf + g = {1.5, 2}; p -= 0.5 * buf
  testing::expect_values(p, {-0.75, -1.0}, 1e-7, "p");
  testing::expect_values(buffer, {1.0, 2.0}, 0, "the caller's tensor");
}

TEST(OptimOptimizer, LoadStateDictRejectsMismatches) {
  std::vector<Tensor> p = two_group_params();
  auto opt = make_two_group_adamw(p);
  testing::set_reference_grads(p, 0);
  opt->step();
  OptimizerStateDict good = opt->state_dict();

  std::vector<Tensor> q = two_group_params();
  auto fresh = make_two_group_adamw(q);
  OptimizerStateDict wrong_shape = good;
  wrong_shape.tensors["state.1.exp_avg"] = zeros({4}, DType::float64);
  try {
    fresh->load_state_dict(wrong_shape);
    FAIL() << "expected ShapeError";
  } catch (const ShapeError& e) {
    EXPECT_NE(std::string(e.what()).find("state.1.exp_avg"), std::string::npos) << e.what();
  }
  OptimizerStateDict one_group = good;
  one_group.meta["param_groups"].erase(1);
  EXPECT_THROW(fresh->load_state_dict(one_group), ValueError);
  OptimizerStateDict bad_index = good;
  bad_index.tensors["state.7.exp_avg"] = zeros({2, 2}, DType::float64);
  EXPECT_THROW(fresh->load_state_dict(bad_index), ValueError);
  OptimizerStateDict other_optimizer = good;
  other_optimizer.meta["optimizer"] = "SGD";
  EXPECT_THROW(fresh->load_state_dict(other_optimizer), ValueError);
  // An option this optimizer does not have was kept (and saved again) unread.
  OptimizerStateDict unknown_option = good;
  unknown_option.meta["param_groups"][0]["momentum_of_doom"] = 0.5;
  try {
    fresh->load_state_dict(unknown_option);
    FAIL() << "an unknown option was accepted";
  } catch (const ValueError& e) {
    EXPECT_NE(std::string(e.what()).find("group 0 has the option \"momentum_of_doom\""), std::string::npos) << e.what();
  }
  // Nothing was changed by the failed loads.
  EXPECT_EQ(fresh->state(q[0]), nullptr);
  fresh->load_state_dict(good);
  EXPECT_EQ(fresh->state(q[1])->step, 1);
}

}  // namespace
}  // namespace hearth
