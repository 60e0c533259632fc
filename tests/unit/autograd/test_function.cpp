// record(), BackwardContext, SavedTensor and the engine's checks, through
// small hand-written nodes, so a failure points at autograd and not at an op.
#include "hearth/autograd/function.h"

#include <gtest/gtest.h>

#include <string>
#include <thread>
#include <vector>

#include "hearth/autograd/grad_mode.h"
#include "hearth/autograd/node.h"
#include "hearth/ops/elementwise.h"
#include "hearth/ops/factory.h"
#include "hearth/ops/reduction.h"
#include "tests/support/test_device.h"

namespace hearth {
namespace {

using autograd::BackwardContext;
using autograd::SavedTensor;

bool contains(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

// y = 3x with a hand-written node, to exercise record() without any op's autograd.
Tensor triple(const Tensor& x, std::vector<bool>* needs_seen = nullptr) {
  Tensor y;
  {
    NoGradGuard g;
    y = mul(x, 3.0);
  }
  autograd::record("TripleBackward", {x}, {y}, [needs_seen](const BackwardContext& c) {
    if (needs_seen) needs_seen->push_back(c.needs(0));
    return std::vector<Tensor>{mul(c.grad(0), 3.0)};
  });
  return y;
}

TEST(Record, OutputsBecomeNonLeavesWithTheNode) {
  Tensor x = tensor({1.f, 2.f}).requires_grad_();
  Tensor y = triple(x);
  EXPECT_TRUE(y.requires_grad());
  EXPECT_FALSE(y.is_leaf());
  ASSERT_NE(y.grad_fn(), nullptr);
  EXPECT_EQ(y.grad_fn()->name(), "TripleBackward");
  ASSERT_EQ(y.grad_fn()->next_edges.size(), 1u);
  EXPECT_TRUE(y.grad_fn()->next_edges[0].valid());
  EXPECT_EQ(y.grad_fn()->outputs.at(0).shape, (Shape{2}));
  sum(y).backward();
  EXPECT_EQ(x.grad().to_vector<float>(), (std::vector<float>{3, 3}));
}

TEST(Record, NothingIsRecordedWithoutGradOrUnderNoGrad) {
  Tensor x = tensor({1.f});
  EXPECT_FALSE(triple(x).requires_grad());
  Tensor w = tensor({1.f}).requires_grad_();
  {
    NoGradGuard g;
    EXPECT_FALSE(grad_enabled());
    EXPECT_FALSE(autograd::any_requires_grad({w}));
    Tensor y = triple(w);
    EXPECT_FALSE(y.requires_grad());
    EXPECT_TRUE(y.is_leaf());
    {
      EnableGradGuard on;
      EXPECT_TRUE(triple(w).requires_grad());
    }
    EXPECT_FALSE(grad_enabled());
  }
  EXPECT_TRUE(grad_enabled());
  EXPECT_TRUE(autograd::any_requires_grad({Tensor(), w}));
  EXPECT_FALSE(autograd::any_requires_grad(std::vector<Tensor>{Tensor(), x}));
}

TEST(Record, GradModeIsPerThread) {
  NoGradGuard g;
  bool other_thread = false;
  std::thread t([&] { other_thread = grad_enabled(); });
  t.join();
  EXPECT_TRUE(other_thread);
  EXPECT_FALSE(grad_enabled());
}

TEST(Record, IntegerOutputsCarryNoGradient) {
  Tensor x = tensor({1.f, 2.f}).requires_grad_();
  Tensor f = Tensor::empty({2}), i = Tensor::empty({2}, DType::int64);
  autograd::record("TwoOutputs", {x}, {f, i}, [](const BackwardContext& c) { return std::vector<Tensor>{c.grad(0)}; });
  EXPECT_TRUE(f.requires_grad());
  EXPECT_FALSE(i.requires_grad());
  EXPECT_TRUE(i.is_leaf());
}

TEST(Record, NeedsTellsWhichInputsWantGradients) {
  Tensor a = tensor({1.f}).requires_grad_();
  Tensor b = tensor({2.f});  // constant
  Tensor y = Tensor::empty({1});
  std::vector<bool> needs;
  autograd::record("PairBackward", {a, b}, {y}, [&needs](const BackwardContext& c) {
    needs = {c.needs(0), c.needs(1), c.needs(2)};
    EXPECT_EQ(c.num_grads(), 1u);
    EXPECT_EQ(c.name(), "PairBackward");
    return std::vector<Tensor>{c.grad(0), Tensor()};
  });
  y.backward(ones({1}));
  EXPECT_EQ(needs, (std::vector<bool>{true, false, false}));
}

TEST(Record, UnusedOutputsGetZeroGradients) {
  Tensor x = tensor({1.f, 2.f}).requires_grad_();
  Tensor y1 = Tensor::empty({2}), y2 = Tensor::empty({3});
  Tensor seen;
  autograd::record("SplitBackward", {x}, {y1, y2}, [&seen](const BackwardContext& c) {
    seen = c.grad(1);
    return std::vector<Tensor>{c.grad(0)};
  });
  y1.backward(tensor({5.f, 6.f}));
  ASSERT_TRUE(seen.defined());
  EXPECT_EQ(seen.shape(), (Shape{3}));
  EXPECT_EQ(seen.to_vector<float>(), (std::vector<float>{0, 0, 0}));
  EXPECT_EQ(x.grad().to_vector<float>(), (std::vector<float>{5, 6}));
}

TEST(Engine, WrongGradientShapeNamesTheFormula) {
  Tensor x = tensor({1.f, 2.f}).requires_grad_();
  Tensor y = Tensor::empty({2});
  autograd::record("BrokenBackward", {x}, {y},
                   [](const BackwardContext&) { return std::vector<Tensor>{ones({3})}; });
  try {
    y.backward(ones({2}));
    FAIL() << "expected AutogradError";
  } catch (const AutogradError& e) {
    EXPECT_TRUE(contains(e.what(), "[autograd] BrokenBackward returned a gradient of shape [3] for input 0, which "
                                   "has shape [2]"))
        << e.what();
  }
  EXPECT_FALSE(x.grad().defined());
}

TEST(Engine, WrongGradientCountNamesTheFormula) {
  Tensor x = tensor({1.f}).requires_grad_();
  Tensor y = Tensor::empty({1});
  autograd::record("CountBackward", {x}, {y}, [](const BackwardContext& c) {
    return std::vector<Tensor>{c.grad(0), c.grad(0)};
  });
  try {
    y.backward(ones({1}));
    FAIL() << "expected AutogradError";
  } catch (const AutogradError& e) {
    EXPECT_TRUE(contains(e.what(), "CountBackward returned 2 gradients for 1 inputs")) << e.what();
  }
}

TEST(Engine, GradientsTakeTheOutputsDtype) {
  Tensor x = tensor({1.f, 2.f}).requires_grad_();
  Tensor h = x.to(DType::bfloat16);  // the gradient flows back through a cast
  DType seen = DType::bool_;
  Tensor y = Tensor::empty({2}, DType::bfloat16);
  autograd::record("SeeBackward", {h}, {y}, [&seen](const BackwardContext& c) {
    seen = c.grad(0).dtype();
    return std::vector<Tensor>{c.grad(0)};
  });
  y.backward(ones({2}, DType::float64));  // a float64 seed is cast to the output's bfloat16
  EXPECT_EQ(seen, DType::bfloat16);
  EXPECT_EQ(x.grad().dtype(), DType::float32);
  EXPECT_EQ(x.grad().to_vector<float>(), (std::vector<float>{1, 1}));
}

TEST(Engine, LeafUsedManyTimesAccumulatesAndHooksRun) {
  Tensor x = tensor({1.f, 2.f}).requires_grad_();
  int hook_calls = 0;
  x.ensure_autograd_meta().post_accumulate_hooks.push_back([&hook_calls](const Tensor& leaf) {
    ++hook_calls;
    EXPECT_TRUE(leaf.grad().defined());
  });
  sum(add(triple(x), triple(x))).backward();
  EXPECT_EQ(x.grad().to_vector<float>(), (std::vector<float>{6, 6}));
  EXPECT_EQ(hook_calls, 1) << "one accumulation per backward, however many uses";
}

TEST(Engine, GradIsNotAliasedWithAnotherLeafsGrad) {
  Tensor a = tensor({1.f}).requires_grad_(), b = tensor({2.f}).requires_grad_();
  sum(add(a, b)).backward();  // add's backward hands both sides the same tensor
  a.grad().fill_(100);
  EXPECT_EQ(b.grad().item<float>(), 1.f);
}

TEST(Engine, BackwardErrorsNameTheProblem) {
  Tensor x = tensor({1.f, 2.f}).requires_grad_();
  Tensor y = triple(x);
  EXPECT_THROW(y.backward(ones({3})), ShapeError);
  try {
    y.backward(ones({2}, DType::float32, testing::test_device()));
    FAIL() << "expected DeviceError";
  } catch (const DeviceError& e) {
    EXPECT_TRUE(contains(e.what(), "[backward] gradient is on testdev:0 but the output is on cpu")) << e.what();
  }
  try {
    y.backward();
    FAIL() << "expected AutogradError";
  } catch (const AutogradError& e) {
    EXPECT_TRUE(contains(e.what(), "only for scalar outputs")) << e.what();
  }
  EXPECT_THROW(tensor(std::vector<int64_t>{1}).requires_grad_(), TypeError);
  EXPECT_THROW(y.requires_grad_(false), AutogradError);  // not a leaf
  EXPECT_THROW(x.set_grad(ones({3})), ShapeError);
}

TEST(Engine, ZeroGradEitherDropsOrZeroes) {
  Tensor x = tensor({1.f, 2.f}).requires_grad_();
  sum(triple(x)).backward();
  Tensor g = x.grad();
  x.zero_grad_(/*set_to_none=*/false);
  EXPECT_TRUE(x.grad().is_same(g));
  EXPECT_EQ(g.to_vector<float>(), (std::vector<float>{0, 0}));
  x.zero_grad_();
  EXPECT_FALSE(x.grad().defined());
}

TEST(SavedTensorTest, UnpackChecksTheVersionAndHoldsNoGraph) {
  Tensor x = tensor({1.f, 2.f}).requires_grad_();
  Tensor y = triple(x);
  SavedTensor s(y);
  Tensor u = s.unpack("SomeBackward");
  EXPECT_EQ(u.storage().get(), y.storage().get());
  EXPECT_FALSE(u.requires_grad());  // a detached alias: no cycle through the graph
  EXPECT_EQ(u.grad_fn(), nullptr);
  y.bump_version();
  try {
    s.unpack("SomeBackward");
    FAIL() << "expected AutogradError";
  } catch (const AutogradError& e) {
    EXPECT_TRUE(contains(e.what(), "saved by SomeBackward is at version")) << e.what();
  }
  SavedTensor empty;
  EXPECT_FALSE(empty.defined());
  EXPECT_FALSE(empty.unpack("X").defined());
  SavedTensor r(x);
  r.reset();
  EXPECT_FALSE(r.defined());
}

TEST(SumToShape, ReducesBroadcastDims) {
  Tensor g = ones({2, 3, 4});
  EXPECT_TRUE(autograd::sum_to_shape(g, {2, 3, 4}).is_same(g));
  Tensor a = autograd::sum_to_shape(g, {3, 1});
  EXPECT_EQ(a.shape(), (Shape{3, 1}));
  EXPECT_EQ(a.to_vector<float>(), (std::vector<float>{8, 8, 8}));
  EXPECT_EQ(autograd::sum_to_shape(g, {4}).to_vector<float>(), (std::vector<float>{6, 6, 6, 6}));
  EXPECT_EQ(autograd::sum_to_shape(g, {}).item<float>(), 24.f);
  EXPECT_EQ(autograd::sum_to_shape(g, {1, 1, 1}).shape(), (Shape{1, 1, 1}));
  EXPECT_THROW(autograd::sum_to_shape(ones({3}), {2, 3}), ShapeError);
}

}  // namespace
}  // namespace hearth
