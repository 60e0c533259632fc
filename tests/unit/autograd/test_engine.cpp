#include "hearth/autograd/engine.h"

#include <gtest/gtest.h>

#include "hearth/autograd/grad_mode.h"
#include "hearth/autograd/gradcheck.h"
#include "hearth/ops/elementwise.h"
#include "hearth/ops/factory.h"
#include "hearth/ops/reduction.h"
#include "hearth/ops/view.h"

namespace hearth {
namespace {

TEST(Autograd, ChainRuleThroughMulAndAdd) {
  Tensor x = tensor({1.f, 2.f, 3.f}).requires_grad_();
  Tensor y = tensor({4.f, 5.f, 6.f}).requires_grad_();
  Tensor z = sum(add(mul(x, y), x));  // dz/dx = y + 1, dz/dy = x
  z.backward();
  EXPECT_EQ(x.grad().to_vector<float>(), (std::vector<float>{5, 6, 7}));
  EXPECT_EQ(y.grad().to_vector<float>(), (std::vector<float>{1, 2, 3}));
}

TEST(Autograd, GradAccumulatesAcrossBackwardCalls) {
  Tensor x = tensor({1.f, 2.f}).requires_grad_();
  sum(mul(x, 3.0)).backward();
  sum(mul(x, 3.0)).backward();
  EXPECT_EQ(x.grad().to_vector<float>(), (std::vector<float>{6, 6}));
}

TEST(Autograd, UnheldGradAccumulatesInItsOwnMemory) {
  // A recorded step graph relies on this: the gradient keeps its memory.
  Tensor x = tensor({1.f, 2.f}).requires_grad_();
  sum(mul(x, 3.0)).backward();
  const void* first = x.grad().data_ptr();
  sum(mul(x, 3.0)).backward();
  EXPECT_EQ(x.grad().data_ptr(), first);
  EXPECT_EQ(x.grad().to_vector<float>(), (std::vector<float>{6, 6}));
  x.zero_grad_(/*set_to_none=*/false);
  sum(mul(x, 2.0)).backward();
  EXPECT_EQ(x.grad().data_ptr(), first);
  EXPECT_EQ(x.grad().to_vector<float>(), (std::vector<float>{2, 2}));
}

TEST(Autograd, ZeroGradKeepingMemoryReadsAsZero) {
  Tensor x = tensor({1.f, 2.f}).requires_grad_();
  Tensor y = tensor({1.f, 2.f}).requires_grad_();
  sum(mul(add(x, y), 3.0)).backward();
  const void* xg = x.grad().data_ptr();
  x.zero_grad_(false);
  y.zero_grad_(false);
  // y is not reached by this backward: its gradient must still read as zero.
  sum(mul(x, 5.0)).backward();
  EXPECT_EQ(x.grad().data_ptr(), xg);
  EXPECT_EQ(x.grad().to_vector<float>(), (std::vector<float>{5, 5}));
  EXPECT_EQ(y.grad().to_vector<float>(), (std::vector<float>{0, 0}));
}

TEST(Autograd, LeavesGivenTheSameGradientGetGradsOfTheirOwn) {
  // add's backward hands one tensor to both sides.
  Tensor x = tensor({1.f, 2.f}).requires_grad_();
  Tensor y = tensor({1.f, 2.f}).requires_grad_();
  sum(add(x, y)).backward();
  x.grad().mul_(2.0);
  EXPECT_EQ(x.grad().to_vector<float>(), (std::vector<float>{2, 2}));
  EXPECT_EQ(y.grad().to_vector<float>(), (std::vector<float>{1, 1}));
}

TEST(Autograd, ZeroGradReachesAGradTheUserHolds) {
  Tensor x = tensor({1.f, 2.f}).requires_grad_();
  sum(mul(x, 3.0)).backward();
  Tensor held = x.grad();
  x.zero_grad_(false);
  EXPECT_EQ(held.to_vector<float>(), (std::vector<float>{0, 0}));
}

TEST(Autograd, HeldGradIsNotChangedByALaterBackward) {
  Tensor x = tensor({1.f, 2.f}).requires_grad_();
  sum(mul(x, 3.0)).backward();
  Tensor held = x.grad();
  sum(mul(x, 3.0)).backward();
  EXPECT_EQ(held.to_vector<float>(), (std::vector<float>{3, 3}));
  EXPECT_EQ(x.grad().to_vector<float>(), (std::vector<float>{6, 6}));
  EXPECT_NE(x.grad().data_ptr(), held.data_ptr());
}

TEST(Autograd, SecondBackwardThroughFreedGraphFails) {
  Tensor x = tensor({1.f, 2.f}).requires_grad_();
  Tensor z = sum(mul(x, x));
  z.backward();
  EXPECT_THROW(z.backward(), AutogradError);
}

TEST(Autograd, RetainGraphAllowsSecondBackward) {
  Tensor x = tensor({1.f, 2.f}).requires_grad_();
  Tensor z = sum(mul(x, x));
  z.backward(Tensor(), /*retain_graph=*/true);
  z.backward();
  EXPECT_EQ(x.grad().to_vector<float>(), (std::vector<float>{4, 8}));
}

TEST(Autograd, InPlaceChangeOfSavedTensorIsCaught) {
  Tensor x = tensor({1.f, 2.f}).requires_grad_();
  Tensor w = tensor({3.f, 4.f});
  Tensor z = sum(mul(x, w));
  w.add_(ones({2}));
  try {
    z.backward();
    FAIL() << "expected AutogradError";
  } catch (const AutogradError& e) {
    EXPECT_NE(std::string(e.what()).find("modified by an in-place operation"), std::string::npos) << e.what();
  }
}

TEST(Autograd, NoGradGuardStopsRecording) {
  Tensor x = tensor({1.f}).requires_grad_();
  NoGradGuard guard;
  Tensor y = mul(x, 2.0);
  EXPECT_FALSE(y.requires_grad());
  EXPECT_TRUE(y.is_leaf());
}

TEST(Autograd, DetachCutsTheGraph) {
  Tensor x = tensor({1.f}).requires_grad_();
  Tensor y = mul(x, 2.0).detach();
  EXPECT_FALSE(y.requires_grad());
}

TEST(Autograd, NonScalarBackwardNeedsGradient) {
  Tensor x = tensor({1.f, 2.f}).requires_grad_();
  Tensor y = mul(x, 2.0);
  EXPECT_THROW(y.backward(), AutogradError);
  y.backward(tensor({1.f, 10.f}));
  EXPECT_EQ(x.grad().to_vector<float>(), (std::vector<float>{2, 20}));
}

TEST(Autograd, BackwardOnTensorWithoutGraphFails) {
  Tensor x = tensor({1.f});
  EXPECT_THROW(x.backward(), AutogradError);
}

TEST(Autograd, DiamondGraphSumsBothPaths) {
  Tensor x = tensor({2.f}).requires_grad_();
  Tensor a = mul(x, 3.0);
  Tensor b = mul(x, x);
  sum(add(a, b)).backward();  // 3 + 2x = 7
  EXPECT_EQ(x.grad().to_vector<float>(), (std::vector<float>{7}));
}

TEST(Gradcheck, PassesForCorrectFormulasOnNonContiguousInputs) {
  Tensor a = randn({3, 4}, DType::float64).transpose(0, 1).requires_grad_();
  Tensor b = randn({4, 1}, DType::float64).requires_grad_();
  auto r = gradcheck([](const std::vector<Tensor>& in) { return div(mul(in[0], in[1]), add(in[1], 3.0)); }, {a, b});
  EXPECT_TRUE(r.ok) << r.message;
}

}  // namespace
}  // namespace hearth
