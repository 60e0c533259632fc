// Adam and AdamW against torch.optim (numbers from tests/fixtures/optim_reference.py).
#include <cmath>

#include <gtest/gtest.h>

#include "hearth/autograd/grad_mode.h"
#include "hearth/dispatch/registry.h"
#include "hearth/ops/factory.h"
#include "hearth/optim/adam.h"
#include "hearth/optim/functional.h"
#include "tests/unit/optim/optim_testing.h"

namespace hearth {
namespace {

using optim::Adam;
using optim::AdamOptions;
using optim::AdamW;
using optim::AdamWOptions;
using testing::check_three_steps;

auto make_adam(AdamOptions o) {
  return [o](std::vector<Tensor> p) { return std::make_unique<Adam>(p, o); };
}
auto make_adamw(AdamWOptions o) {
  return [o](std::vector<Tensor> p) { return std::make_unique<AdamW>(p, o); };
}

const std::array<testing::ParamValues, 3> kAdamDefault = {{
    {{{0.400000009999999, -0.9000000049999998, 1.4000000033333333, 1.9000000025},
      {9.999999855958563e-10, -0.1000000005, 0.20000000199999995}}},
    {{{0.4598354265523342, -0.9162732304481741, 1.321667272150606, 1.853053186989829},
      {-0.08556971614154725, -0.032994175560267416, 0.22162969277761718}}},
    {{{0.47955491887427926, -0.9608018923145386, 1.3234625889543132, 1.7798487440823365},
      {-0.0807483012544649, 0.005253504549923418, 0.18698387841286146}}},
}};

TEST(OptimAdam, DefaultMatchesPyTorch) {
  // Step 1 by hand: m = 0.1 g, v = 0.001 g^2, m_hat = g, v_hat = g^2, so each
  // element moves by lr * g / (|g| + eps) ~ 0.1 against the gradient's sign.
  check_three_steps(make_adam({.lr = 0.1}), kAdamDefault);
}

TEST(OptimAdam, L2WeightDecayAndAmsgradMatchPyTorch) {
  check_three_steps(
      make_adam({.lr = 0.05, .beta1 = 0.8, .beta2 = 0.99, .eps = 1e-6, .weight_decay = 0.1, .amsgrad = true}),
      {{
          {{{0.4500003333311111, -0.9500001666661111, 1.4500001111108642, 1.9500000833331945},
            {0.05000004950490148, -0.150000024752463, 0.25000009433944465}}},
          {{{0.47741389871815837, -0.9400972769939774, 1.4054681748141906, 1.9127273067435273},
            {0.008471589536179054, -0.11836076409515876, 0.2614825039742432}}},
          {{{0.47874615796558295, -0.9439191978979442, 1.3858188030413094, 1.8682678528007335},
            {0.015326909957073725, -0.10247041913121138, 0.24113006959084202}}},
      }});
}

TEST(OptimAdam, MaximizeMatchesPyTorch) {
  check_three_steps(make_adam({.lr = 0.1, .weight_decay = 0.05, .maximize = true}),
                    {{
                        {{{0.5999999866666684, -1.0999999933333338, 1.5999999955555557, 2.099999996666667},
                          {0.1999999989949749, -0.29999999949748746, 0.39999999793814434}}},
                        {{{0.535703458324577, -1.062777453210078, 1.6565778309746, 2.113316375027982},
                          {0.2851583363898527, -0.3664427472293009, 0.37569497746066466}}},
                        {{{0.5080952987450026, -1.0015343404535262, 1.6239044174417143, 2.170897126196516},
                          {0.2792613551078057, -0.403548942907679, 0.4080368312922924}}},
                    }});
}

TEST(OptimAdamW, DefaultMatchesPyTorch) {
  // Decoupled decay: p *= 1 - lr * 0.01 before the Adam step (0.5 -> 0.4995 - 0.1).
  check_three_steps(make_adamw({.lr = 0.1}),
                    {{
                        {{{0.399500009999999, -0.8990000049999998, 1.3985000033333332, 1.8980000025},
                          {-9.999900000001727e-05, -0.0998000005, 0.19970000199999993}}},
                        {{{0.4589359265423342, -0.9143742304431741, 1.3187687721472725, 1.849155186987329},
                          {-0.08566961614254726, -0.03269437555976741, 0.22112999277561715}}},
                        {{{0.4781964829377369, -0.9579885180790955, 1.3192453201788326, 1.7741015888928493},
                          {-0.08076253163932236, 0.005585998925983195, 0.1862630484180858}}},
                    }});
}

TEST(OptimAdamW, AmsgradMatchesPyTorch) {
  check_three_steps(make_adamw({.lr = 0.05, .beta1 = 0.7, .beta2 = 0.9, .weight_decay = 0.3, .amsgrad = true}),
                    {{
                        {{{0.4425000049999995, -0.9350000024999998, 1.4275000016666666, 1.92000000125},
                          {0.048500000499999994, -0.14700000025, 0.24550000099999997}}},
                        {{{0.4701169112656177, -0.9351842943054116, 1.3709516927115017, 1.8729564079233365},
                          {0.007231181192234627, -0.116416076540476, 0.2585983101991563}}},
                        {{{0.47032907747047703, -0.9501824094457557, 1.3613006454972645, 1.806219046368965},
                          {0.01943133443128107, -0.10377028636424157, 0.2342998728138212}}},
                    }});
}

TEST(OptimAdam, Float32AndHalfParameters) {
  check_three_steps(make_adam({.lr = 0.1}), kAdamDefault, 2e-6, DType::float32);
  check_three_steps(make_adam({.lr = 0.1}), kAdamDefault, 2e-2, DType::float16);
}

TEST(OptimAdam, StateHoldsStepAndMoments) {
  std::vector<Tensor> params = testing::reference_params();
  Adam opt(params, {.lr = 0.1, .amsgrad = true});
  for (int t = 0; t < 2; ++t) {
    testing::set_reference_grads(params, t);
    opt.step();
  }
  const optim::ParamState* st = opt.state(params[1]);
  ASSERT_NE(st, nullptr);
  EXPECT_EQ(st->step, 2);
  // exp_avg = 0.9 * 0.1 * g1 + 0.1 * g2; exp_avg_sq likewise with 0.999 and g^2.
  testing::expect_values(st->tensors.at("exp_avg"), {0.9 * 0.1 * 1.0 + 0.1 * 0.3, 0.9 * 0.1 * -2.0, 0.9 * 0.05 - 0.07},
                         1e-15, "exp_avg");
  testing::expect_values(st->tensors.at("exp_avg_sq"),
                         {0.999 * 0.001 * 1.0 + 0.001 * 0.09, 0.999 * 0.001 * 4.0, 0.999 * 0.001 * 0.25 + 0.001 * 0.49},
                         1e-15, "exp_avg_sq");
  EXPECT_EQ(st->tensors.count("max_exp_avg_sq"), 1u);
}

TEST(OptimAdam, RejectsBadHyperparameters) {
  std::vector<Tensor> params = testing::reference_params();
  EXPECT_THROW(Adam(params, {.lr = -1}), ValueError);
  EXPECT_THROW(Adam(params, {.beta1 = 1.0}), ValueError);
  EXPECT_THROW(Adam(params, {.beta2 = -0.1}), ValueError);
  EXPECT_THROW(Adam(params, {.eps = -1e-8}), ValueError);
  EXPECT_THROW(AdamW(params, {.weight_decay = -0.01}), ValueError);
  try {
    Adam(params, {.beta1 = 1.5});
    FAIL() << "expected ValueError";
  } catch (const ValueError& e) {
    EXPECT_NE(std::string(e.what()).find("beta parameter at index 0"), std::string::npos) << e.what();
  }
}

TEST(OptimAdam, FunctionalStepChecksItsArguments) {
  NoGradGuard no_grad;
  Tensor p = zeros({3}), g = zeros({3}), m = zeros({3}), v = zeros({3});
  AdamStepAttrs a;
  EXPECT_THROW(optim::adam_step_(p, g, zeros({2}), v, Tensor(), a), ShapeError);
  EXPECT_THROW(optim::adam_step_(p, g, m, zeros({3}, DType::float64), Tensor(), a), TypeError);
  EXPECT_THROW(optim::adam_step_(p, g, m, v, Tensor(), AdamStepAttrs{.step = 0}), ValueError);
  EXPECT_THROW(optim::adam_step_(p, g, m, v, Tensor(), AdamStepAttrs{.amsgrad = true}), ValueError);
  EXPECT_THROW(optim::adam_step_(p, g, m, v, zeros({3}), a), ValueError);
  // A parameter that requires grad may not be updated while recording.
  Tensor leaf = zeros({3});
  leaf.requires_grad_(true);
  EnableGradGuard recording;
  EXPECT_THROW(optim::adam_step_(leaf, g, m, v, Tensor(), a), AutogradError);
}

TEST(OptimAdam, OneOpPerParameterIsDispatched) {
  // The update is the registered op, so a backend can fuse it.
  {
    NoGradGuard no_grad;
    optim::adam_step_(zeros({1}), ones({1}), zeros({1}), zeros({1}), Tensor(), {});
  }
  EXPECT_NE(find_op("adam_step"), nullptr);
  EXPECT_NE(find_op("sgd_step"), nullptr);
  EXPECT_TRUE(supports(find_op("adam_step"), kCpu, DType::bfloat16));
  const OpDef& def = find_op("adam_step")->def;
  EXPECT_EQ(def.mutated_inputs, (std::vector<int>{0, 2, 3, 4}));
}

}  // namespace
}  // namespace hearth
